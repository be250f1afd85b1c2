package hub

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// hubTypes are the only types app/hub declares: the hub, its options and
// its list of parts. Anything else (an adapter, a mirror of another
// package's struct) belongs to the package that owns the data: it
// implements the consumer's interface itself.
var hubTypes = []string{"Hub", "Option", "part", "parts"}

// pendingTypes are types still declared in files other helpers are
// rewriting (alerts.go, devices.go); TODO(lead):
// empty at merge.
var pendingTypes []string

// pendingHubCaptures are types of those files holding the *Hub, which
// hides the order components are built in; TODO(lead): empty at merge.
var pendingHubCaptures []string

// pendingHubClosures are functions of those files handing a component a
// closure over the *Hub; TODO(lead): empty at merge.
var pendingHubClosures []string

// pendingDefaultConfigs are DefaultConfig calls app/hub still makes:
// none (the device component's Config, its firewall driver's included,
// is HubConfig.Devices).
var pendingDefaultConfigs []string

// hubFiles parses app/hub's non-test files.
func hubFiles(t *testing.T) map[string]*ast.File {
	t.Helper()
	paths, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]*ast.File{}
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files[p] = f
	}
	return files
}

// TestHubOnlyWires: app/hub declares no type but its own few, and no
// struct holds the *Hub (an adapter reading the hub's fields late hides
// which component it needs, and so the order they must be built in).
func TestHubOnlyWires(t *testing.T) {
	var extra, captures []string
	for name, f := range hubFiles(t) {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.TYPE {
				continue
			}
			for _, s := range g.Specs {
				ts := s.(*ast.TypeSpec)
				if slices.Contains(hubTypes, ts.Name.Name) {
					continue
				}
				extra = append(extra, name+": "+ts.Name.Name)
				if st, ok := ts.Type.(*ast.StructType); ok && holdsHub(st) {
					captures = append(captures, name+": "+ts.Name.Name)
				}
			}
		}
	}
	slices.Sort(extra)
	slices.Sort(captures)
	if diff := cmp.Diff(extra, pendingTypes); diff != "" {
		t.Errorf("types app/hub declares besides %v (-got, +want):\n%s", hubTypes, diff)
	}
	if diff := cmp.Diff(captures, pendingHubCaptures); diff != "" {
		t.Errorf("types holding the *Hub (-got, +want):\n%s", diff)
	}
}

// TestNoClosureOverHub: a function literal the hub hands a component
// captures the component it needs (alerts := h.alerts), not the *Hub,
// whose fields it would read late, whatever the build order.
func TestNoClosureOverHub(t *testing.T) {
	var closures []string
	for name, f := range hubFiles(t) {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			// The build steps are where components are handed their
			// collaborators; Start, Stop and serving are the hub's own.
			if !ok || fd.Recv == nil || len(fd.Recv.List[0].Names) == 0 || fd.Body == nil || !strings.HasPrefix(fd.Name.Name, "build") {
				continue
			}
			recv := fd.Recv.List[0].Names[0].Name
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				lit, ok := n.(*ast.FuncLit)
				if !ok {
					return true
				}
				if mentions(lit.Body, recv) {
					closures = append(closures, name+": "+fd.Name.Name)
				}
				return false
			})
		}
	}
	slices.Sort(closures)
	closures = slices.Compact(closures)
	if diff := cmp.Diff(closures, pendingHubClosures); diff != "" {
		t.Errorf("functions handing out a closure over the *Hub (-got, +want):\n%s", diff)
	}
}

// mentions reports whether the identifier name is used in n.
func mentions(n ast.Node, name string) bool {
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && id.Name == name {
			found = true
		}
		return !found
	})
	return found
}

// holdsHub reports whether a struct has a field of type Hub or *Hub.
func holdsHub(st *ast.StructType) bool {
	for _, f := range st.Fields.List {
		typ := f.Type
		if s, ok := typ.(*ast.StarExpr); ok {
			typ = s.X
		}
		if id, ok := typ.(*ast.Ident); ok && id.Name == "Hub" {
			return true
		}
	}
	return false
}

// TestNoDefaultConfigInHub: the hub configures no component itself —
// every Config comes from config.HubConfig, where YAML and `netmon config
// print` reach it — so app/hub calls no DefaultConfig (nor any
// Default...Config).
func TestNoDefaultConfigInHub(t *testing.T) {
	var calls []string
	for name, f := range hubFiles(t) {
		ast.Inspect(f, func(n ast.Node) bool {
			c, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			var fn string
			switch x := c.Fun.(type) {
			case *ast.SelectorExpr:
				if pkg, ok := x.X.(*ast.Ident); ok {
					fn = pkg.Name + "." + x.Sel.Name
				} else {
					fn = x.Sel.Name
				}
			case *ast.Ident:
				fn = x.Name
			}
			if base := fn[strings.LastIndexByte(fn, '.')+1:]; strings.HasPrefix(base, "Default") && strings.HasSuffix(base, "Config") {
				calls = append(calls, name+": "+fn)
			}
			return true
		})
	}
	slices.Sort(calls)
	if diff := cmp.Diff(calls, pendingDefaultConfigs); diff != "" {
		t.Errorf("DefaultConfig calls in app/hub (-got, +want):\n%s", diff)
	}
}
