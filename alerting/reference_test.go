package alerting_test

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"reflect"
	"strings"
	"testing"

	"netmon/alerting"
	"netmon/alerting/siem"
	"netmon/store/record"
)

var updateKinds = flag.Bool("update-kinds", false, "rewrite ui/docs/93-alert-kinds.md from alerting.Kinds and record.AlertEvent")

// TestAlertKindsReference: the manual's list of alert kinds and of an
// alert event's fields is made from alerting.Kinds (the kinds the API
// enumerates), siem's names of them, and record.AlertEvent with its
// field comments; a new kind or field without regenerating fails here:
//
//	go test ./alerting -run TestAlertKindsReference -update-kinds
func TestAlertKindsReference(t *testing.T) {
	var b bytes.Buffer
	b.WriteString(`# Alert kinds and fields

<!-- Generated from alerting.Kinds(), alerting/siem's names and
store/record.AlertEvent by go test ./alerting -run TestAlertKindsReference
-update-kinds. Do not edit by hand. -->

What each rule watches, when it fires and its settings are in
[Alerting and delivery](09-alerting.md). The kinds the hub raises:

| kind | name (CEF/LEEF, e-mail subjects) |
|---|---|
`)
	for _, k := range alerting.Kinds() {
		fmt.Fprintf(&b, "| `%s` | %s |\n", k, siem.Label(k))
	}
	b.WriteString(`
## The fields of an alert event

As ` + "`GET /api/alerts/events`" + `, the live feed and webhooks carry them.

| field | type | meaning |
|---|---|---|
`)
	docs := fieldComments(t, "../store/record", "AlertEvent")
	rt := reflect.TypeFor[record.AlertEvent]()
	for i := range rt.NumField() {
		f := rt.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		typ := map[reflect.Kind]string{reflect.Int64: "integer", reflect.Int: "integer", reflect.String: "string"}[f.Type.Kind()]
		if docs[f.Name] == "" || typ == "" {
			t.Fatalf("record.AlertEvent.%s: no comment or an unknown type %s", f.Name, f.Type)
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", name, typ, docs[f.Name])
	}
	page := "../ui/docs/93-alert-kinds.md"
	if *updateKinds {
		if err := os.WriteFile(page, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(page)
	if err != nil || !bytes.Equal(want, b.Bytes()) {
		t.Fatalf("%s is not what the code says (%v): regenerate with go test ./alerting -run TestAlertKindsReference -update-kinds", page, err)
	}
}

// fieldComments are the doc comments of the fields of struct typ in dir.
func fieldComments(t *testing.T, dir, typ string) map[string]string {
	t.Helper()
	pkgs, err := parser.ParseDir(token.NewFileSet(), dir, func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, p := range pkgs {
		for _, f := range p.Files {
			ast.Inspect(f, func(n ast.Node) bool {
				ts, ok := n.(*ast.TypeSpec)
				if !ok || ts.Name.Name != typ {
					return true
				}
				for _, fl := range ts.Type.(*ast.StructType).Fields.List {
					for _, nm := range fl.Names {
						out[nm.Name] = strings.ReplaceAll(strings.Join(strings.Fields(fl.Doc.Text()), " "), "|", `\|`)
					}
				}
				return false
			})
		}
	}
	return out
}
