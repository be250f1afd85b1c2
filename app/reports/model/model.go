// Package model is the one description of a generated report: the
// builder (app/reports) fills it from the data, and the renderers
// (app/reports/render) turn the same value into HTML and into PDF. Every
// figure is formatted once, here in the model, so the HTML and the PDF
// print the same text and cannot disagree.
//
// It is a leaf: standard library only.
package model

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"
)

// Report types (spec 4.3).
const (
	TypeTraffic    = "traffic"
	TypeEnterprise = "enterprise"
	TypeCompliance = "compliance"
)

// Report is one generated report: what was asked, when, and its sections
// in print order.
type Report struct {
	// Type is traffic, enterprise or compliance.
	Type string `json:"type"`
	// Title is the heading of the first page ("Traffic report").
	Title string `json:"title"`
	// Site is the site the report covers; "" is every site.
	Site string `json:"site,omitempty"`
	// Days is the length of the range; From and To bound it (To excluded).
	Days int       `json:"days"`
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
	// GeneratedAt is when the hub built the report; Timezone names the
	// zone every time in the report is printed in.
	GeneratedAt time.Time `json:"generated_at"`
	Timezone    string    `json:"timezone"`
	// Hub is the hub's name or public URL, printed in the footer.
	Hub string `json:"hub,omitempty"`
	// Sections in print order.
	Sections []Section `json:"sections"`
}

// Section is one titled part of a report. When Empty is set the section
// has no data and its note is printed instead of blocks (spec 4.3: a
// missing source prints an empty-data note, never an error).
type Section struct {
	// ID is a stable anchor ("summary", "daily-traffic", ...).
	ID     string  `json:"id"`
	Title  string  `json:"title"`
	Empty  string  `json:"empty,omitempty"`
	Blocks []Block `json:"blocks,omitempty"`
}

// Block is one element of a section; exactly one field is set.
type Block struct {
	// Paragraph is prose (the executive summary's sentences).
	Paragraph string `json:"paragraph,omitempty"`
	// Figures are labelled key figures printed as a row of tiles.
	Figures []Figure `json:"figures,omitempty"`
	// Table is a table of formatted cells.
	Table *Table `json:"table,omitempty"`
	// Chart is a chart drawn as vectors (SVG in HTML, lines in PDF).
	Chart *Chart `json:"chart,omitempty"`
	// List is a bulleted list (recommendations, each citing its figure).
	List []string `json:"list,omitempty"`
}

// Figure is one key figure: "Total traffic" / "1.24 TB".
type Figure struct {
	Label string `json:"label"`
	Value string `json:"value"`
	// Note is an optional qualifier ("+12 % on the previous period").
	Note string `json:"note,omitempty"`
}

// Column of a table; Right aligns numbers.
type Column struct {
	Title string `json:"title"`
	Right bool   `json:"right,omitempty"`
}

// Table is a table whose cells are already formatted. More counts the
// rows left out to bound the report ("and 1 234 more").
type Table struct {
	Caption string     `json:"caption,omitempty"`
	Columns []Column   `json:"columns"`
	Rows    [][]string `json:"rows"`
	More    int        `json:"more,omitempty"`
	// MoreAtLeast says More is a lower bound: the rows come from daily
	// rollups of which one kept only its busiest keys ("and at least N
	// more").
	MoreAtLeast bool `json:"more_at_least,omitempty"`
}

// Chart kinds.
const (
	ChartBars = "bars" // one bar per label, series stacked
	ChartLine = "line" // one line per series
)

// Chart is drawn by the renderer from raw values; Format says how its
// axis ticks are printed.
type Chart struct {
	Kind   string   `json:"kind"`
	Title  string   `json:"title"`
	Unit   string   `json:"unit"` // "bytes", "bit/s", "%", "count"
	Labels []string `json:"labels"`
	Series []Series `json:"series"`
}

// Series is one named row of values, one per label.
type Series struct {
	Name   string    `json:"name"`
	Values []float64 `json:"values"`
}

// DataSHA256 is the SHA-256 of the report's data: the canonical JSON of
// the model (encoding/json's field order and escaping). An archived
// report carries it, so the data behind a rendering can be checked.
func (r *Report) DataSHA256() string {
	b, err := json.Marshal(r)
	if err != nil { // only unsupported values (NaN) fail; the builder never stores them
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
