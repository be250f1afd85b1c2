// Package render turns a report model into HTML and PDF. Placeholder:
// the renderers land with issue 31's render work.
package render

import (
	"errors"
	"io"

	"netmon/app/reports/model"
)

// HTML writes r as one self-contained HTML page.
func HTML(w io.Writer, r *model.Report) error { return errors.New("render: HTML not built yet") }

// PDF writes r as a PDF document.
func PDF(w io.Writer, r *model.Report) error { return errors.New("render: PDF not built yet") }
