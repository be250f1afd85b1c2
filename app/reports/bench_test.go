package reports

import (
	"bytes"
	"io"
	"testing"
	"time"

	"netmon/app/reports/model"
	"netmon/store"
	"netmon/store/storetest"
)

// BenchmarkGenerateArchive3MB: what the service adds around the builder
// and the renderer for a 3 MB PDF (the size bound): hashing it,
// storing it in the archive with its audit record, on both databases.
//
//	go test -run '^$' -bench GenerateArchive3MB -benchtime 20x ./app/reports/
func BenchmarkGenerateArchive3MB(b *testing.B) {
	body := bytes.Repeat([]byte("%PDF-1.7 0123456789abcdef"), 3<<20/25)
	render := func(w io.Writer, _ *model.Report) error { _, err := w.Write(body); return err }
	for _, open := range []struct {
		name string
		db   func(testing.TB) *store.DB
	}{{"sqlite", storetest.OpenSQLite}, {"postgres", storetest.OpenPostgres}} {
		b.Run(open.name, func(b *testing.B) {
			db := open.db(b)
			clk := newClock(time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC))
			s := New(nil, DefaultConfig(), Deps{DB: db, Builder: &fakeBuilder{}, PDF: render, Now: clk.Now})
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if _, _, err := s.Generate(b.Context(), alice, Request{Format: FormatPDF}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
