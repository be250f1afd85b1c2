// Package render turns a report model (app/reports/model) into the two
// forms a report is read in: one self-contained HTML page and an A4 PDF.
// It sits under app/reports: the builder fills the model, render prints
// it, and imports nothing of ours but the model.
//
// Both renderers print the same text. newPage formats every header and
// footer line, bounds tables and lists (a shared row budget, "and N
// more"), and lays out every chart once; HTML and PDF only draw that
// page, so a figure cannot read differently in the two.
//
// Charts are drawn by our own small vector layout (layout.go) rather than
// a charting library: the two outputs need the same drawing from the same
// numbers, once as inline SVG and once as fpdf lines and rectangles, and
// the charts are simple (stacked bars per day, a few lines). A library
// draws to one backend (usually raster or its own SVG), would need a
// second path for the PDF, brings fonts and scripts the self-contained
// page must not load, and would make the bytes depend on its version.
// The layout computes the axis scale with 1-2-5 ticks, formats ticks by
// unit (bytes in KB/MB/GB/TB, bit/s, %, counts) and places every bar,
// point and legend entry in abstract units that the SVG uses as its
// viewBox and the PDF scales to the page width.
//
// Names come from devices and peers, so they are hostile: html/template
// escapes them for their context, and clean (clean.go) first turns
// invalid UTF-8, control characters, bidirectional overrides and
// characters past the Basic Multilingual Plane into U+FFFD or a space, in
// both outputs alike (fpdf panics on the first and the last).
//
// The PDF embeds the Go fonts (golang.org/x/image/font/gofont), subset
// by fpdf, so Latin (Turkish included), Greek and Cyrillic names render
// and extract; CJK, Arabic and Hebrew extract as text but draw as empty
// boxes, the Go fonts having no such glyphs. Its dates come from the
// model, so the same model gives the same bytes and an archived report's
// SHA-256 can be reproduced.
package render
