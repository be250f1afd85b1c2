package config

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var updateReference = flag.Bool("update", false, "rewrite ui/docs/90-configuration-reference.md from the binding rows")

const referencePage = "../../ui/docs/90-configuration-reference.md"

// TestConfigurationReference: the manual's configuration reference is
// made from the binding rows (flag, variables, YAML key, default, help)
// and, for the keys of the components' blocks, from the doc comment of
// the Config field each sets. Changing a flag's help, a default or a
// Config field without regenerating fails here:
//
//	go test ./app/config -run TestConfigurationReference -update
func TestConfigurationReference(t *testing.T) {
	got := renderReference(t)
	for _, line := range strings.Split(string(got), "\n") {
		if strings.HasSuffix(line, "|  |") {
			t.Errorf("a setting without a meaning (give its Config field a doc comment): %s", line)
		}
	}
	want, err := os.ReadFile(referencePage)
	if *updateReference {
		if err := os.WriteFile(referencePage, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err != nil {
		t.Fatalf("%v (generate it: go test ./app/config -run TestConfigurationReference -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is not what the code says: regenerate it with go test ./app/config -run TestConfigurationReference -update", referencePage)
	}
}

func renderReference(t *testing.T) []byte {
	t.Helper()
	docs := fieldDocs{t: t, parsed: map[string]map[string]*ast.StructType{}}
	var b bytes.Buffer
	b.WriteString(`# Configuration reference

<!-- Generated from app/config's binding rows and the components' Config
fields by go test ./app/config -run TestConfigurationReference -update.
Do not edit by hand. -->

Every setting in three spellings: the flag (one dash or two), the
environment variable and the YAML key of the ` + "`-config`" + ` file.
Precedence: flag, then variable, then file, then the default.
` + "`netmon config print`" + ` shows the values a command would run with and where
each came from. How the settings fit together: [Configuration and commands](03-configuration.md).

## Hub: flags and top-level keys

| flag | environment | YAML | default | meaning |
|---|---|---|---|---|
`)
	def := DefaultHubConfig()
	for _, bd := range hubBindings {
		if bd.block {
			continue
		}
		b.WriteString(row(true, bd.flag, bd.envNames(), bd.key, shown(bd.kind, bd.ptr(&def), bd.secret), meaning(bd.usage, docs, reflect.TypeOf(def), bd.field)))
	}
	b.WriteString(`
## Hub: component blocks

Every other setting of a component sits in its block: YAML ` + "`block:` then `key: value`" + `,
or the variable ` + "`NETMON_<BLOCK>__<KEY>`" + `. Durations are written ` + "`30s`, `5m`, `1h30m`" + `.
A count or period may not be negative, nor 0 where its default is not 0.
The meaning is the doc comment of the component's Config field.

| YAML | environment | default | meaning |
|---|---|---|---|
`)
	for _, bd := range hubBindings {
		if !bd.block {
			continue
		}
		b.WriteString(row(false, "", bd.envNames(), bd.key, shown(bd.kind, bd.ptr(&def), bd.secret), docs.of(reflect.TypeOf(def), bd.field)))
	}
	b.WriteString(`
## Agent

| flag | environment | YAML | default | meaning |
|---|---|---|---|---|
`)
	adef := DefaultAgentConfig()
	for _, bd := range agentBindings {
		b.WriteString(row(true, bd.flag, bd.envNames(), bd.key, shown(bd.kind, bd.ptr(&adef), bd.secret), meaning(bd.usage, docs, reflect.TypeOf(adef), bd.field)))
	}
	return b.Bytes()
}

func shown(k kind, p any, secret bool) string {
	v := k.show(p)
	if secret && v != "" {
		return Redacted
	}
	return v
}

// meaning is a setting's help text, or its field's doc comment for a key
// with no flag (and so no help).
func meaning(usage string, docs fieldDocs, root reflect.Type, field string) string {
	if usage != "" {
		return usage
	}
	return docs.of(root, field)
}

func row(withFlag bool, flagName string, env []string, key, def, meaning string) string {
	cell := func(s string) string {
		if s == "" {
			return "—"
		}
		return "`" + strings.ReplaceAll(s, "|", `\|`) + "`"
	}
	var envs []string
	for _, e := range env {
		envs = append(envs, cell(e))
	}
	f := "—"
	if flagName != "" {
		f = cell("-" + flagName)
	}
	// The usage strings end with "(env NAME)" for --help; the table has a
	// column for that.
	if i := strings.LastIndex(meaning, " (env "); i >= 0 && strings.HasSuffix(meaning, ")") {
		meaning = meaning[:i]
	}
	meaning = strings.ReplaceAll(strings.ReplaceAll(meaning, "|", `\|`), "\n", " ")
	if !withFlag {
		return fmt.Sprintf("| %s | %s | %s | %s |\n", cell(key), strings.Join(envs, ", "), cell(def), meaning)
	}
	return fmt.Sprintf("| %s | %s | %s | %s | %s |\n", f, strings.Join(envs, ", "), cell(key), cell(def), meaning)
}

// fieldDocs reads the doc comments of Config fields from the source of
// their packages (the module's own; this test runs in app/config).
type fieldDocs struct {
	t      *testing.T
	parsed map[string]map[string]*ast.StructType // package path -> type name -> struct
}

// of is the doc comment of the field at path (Auth.Throttle.MaxFailures)
// within root, as one line.
func (d fieldDocs) of(root reflect.Type, path string) string {
	parts := strings.Split(path, ".")
	t := root
	for i, name := range parts {
		f, ok := t.FieldByName(name)
		if !ok {
			d.t.Fatalf("%s: no field %s in %s", path, name, t)
		}
		if i == len(parts)-1 {
			return d.comment(t, name)
		}
		t = f.Type
	}
	return ""
}

func (d fieldDocs) comment(owner reflect.Type, field string) string {
	pkg := owner.PkgPath()
	types, ok := d.parsed[pkg]
	if !ok {
		types = map[string]*ast.StructType{}
		dir := filepath.Join("../..", strings.TrimPrefix(pkg, "netmon/"))
		files, err := parseGoFiles(dir)
		if err != nil {
			d.t.Fatalf("parse %s: %v", dir, err)
		}
		{
			for _, f := range files {
				ast.Inspect(f, func(n ast.Node) bool {
					if ts, ok := n.(*ast.TypeSpec); ok {
						if st, ok := ts.Type.(*ast.StructType); ok {
							types[ts.Name.Name] = st
						}
					}
					return true
				})
			}
		}
		d.parsed[pkg] = types
	}
	st := types[owner.Name()]
	if st == nil {
		d.t.Fatalf("no struct %s in %s", owner.Name(), pkg)
	}
	// A field without a comment of its own belongs to the group the
	// comment above it describes (Queue's per-kind record caps).
	last := ""
	for _, f := range st.Fields.List {
		text := f.Doc.Text()
		if text == "" {
			text = f.Comment.Text()
		}
		if text != "" {
			last = strings.Join(strings.Fields(text), " ")
		}
		for _, n := range f.Names {
			if n.Name == field {
				return last
			}
		}
	}
	return ""
}

// parseGoFiles parses the non-test Go files of dir (parser.ParseDir is
// deprecated).
func parseGoFiles(dir string) ([]*ast.File, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	var out []*ast.File
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, n, nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}
