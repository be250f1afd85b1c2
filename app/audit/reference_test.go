package audit

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"
)

var updateReference = flag.Bool("update", false, "rewrite ui/docs/94-audit-actions.md from audit.go")

const actionsPage = "../../ui/docs/94-audit-actions.md"

// TestAuditActionsReference: the manual's list of audit actions is the
// Action constants of audit.go with their comments, so an action added
// without regenerating the page fails here:
//
//	go test ./app/audit -run TestAuditActionsReference -update
func TestAuditActionsReference(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "audit.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	b.WriteString(`# Audit actions

<!-- Generated from the Action constants of app/audit/audit.go by
go test ./app/audit -run TestAuditActionsReference -update. Do not edit by hand. -->

Every record of the audit chain names its action. ` + "`GET /api/v1/audit?action=`" + `
filters by it; the [compliance log](10-compliance.md) seals the chain.
Results are ` + "`ok`, `error`" + ` (the action failed, with the reason) and ` + "`denied`" + `.

| action | recorded when |
|---|---|
`)
	n := 0
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			v := s.(*ast.ValueSpec)
			if len(v.Names) != 1 || !strings.HasPrefix(v.Names[0].Name, "Action") || len(v.Values) != 1 {
				continue
			}
			lit, ok := v.Values[0].(*ast.BasicLit)
			if !ok {
				continue
			}
			value, _ := strconv.Unquote(lit.Value)
			note := strings.TrimSpace(v.Comment.Text())
			if note == "" {
				note = strings.Join(strings.Fields(v.Doc.Text()), " ")
			}
			name := strings.TrimPrefix(v.Names[0].Name, "Action")
			if strings.HasSuffix(name, "Prefix") {
				value += "<op>"
			}
			if note == "" {
				note = words(name)
			}
			fmt.Fprintf(&b, "| `%s` | %s |\n", value, note)
			n++
		}
	}
	if n < 30 {
		t.Fatalf("read %d actions from audit.go; the const block changed shape", n)
	}
	if *updateReference {
		if err := os.WriteFile(actionsPage, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(actionsPage)
	if err != nil || !bytes.Equal(want, b.Bytes()) {
		t.Fatalf("%s is not what audit.go says (%v): regenerate with go test ./app/audit -run TestAuditActionsReference -update", actionsPage, err)
	}
}

// words spells a constant's name (UserCreate) as "user create".
func words(name string) string {
	var b strings.Builder
	for i, r := range name {
		if i > 0 && r >= 'A' && r <= 'Z' {
			b.WriteByte(' ')
		}
		b.WriteRune(r)
	}
	return strings.ToLower(b.String())
}
