package api

import (
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"netmon/app/fleet/agents"
	"netmon/capture/pcaprec"
	"netmon/store"
	"netmon/store/record"
)

// formerPaths are the import paths packages had before a rename, whose
// names the old derived schema names still carry (capture/record became
// capture/pcaprec: its types were RecordStatus, RecordFileEntry, ...).
func formerPaths() map[string][]string {
	return map[string][]string{"netmon/capture/pcaprec": {"netmon/capture/record"}}
}

// packageDerived says whether name is the name of a package on t's import
// path (or a former one) followed by t's Go name: StoreFlowRow for
// store.FlowRow, FleetAgentItem for fleet/agents.AgentItem, RecordStatus
// for pcaprec.Status. That is the shape of the names the Go layout
// derived, which the contract no longer uses.
func packageDerived(t reflect.Type, name string) bool {
	prefix, ok := strings.CutSuffix(name, t.Name())
	if !ok || prefix == "" {
		return false
	}
	for _, path := range append([]string{t.PkgPath()}, formerPaths()[t.PkgPath()]...) {
		for _, elem := range strings.Split(path, "/") {
			if strings.EqualFold(elem, prefix) {
				return true
			}
		}
	}
	return false
}

func TestPackageDerived(t *testing.T) {
	for _, tt := range []struct {
		desc string
		t    reflect.Type
		name string
		want bool
	}{
		{"the store's package name first", reflect.TypeFor[store.FlowRow](), "StoreFlowRow", true},
		{"the record package's name first", reflect.TypeFor[record.AlertEvent](), "RecordAlertEvent", true},
		{"a parent package's name first", reflect.TypeFor[agents.AgentItem](), "FleetAgentItem", true},
		{"a former package's name first (capture/record, now pcaprec)", reflect.TypeFor[pcaprec.Status](), "RecordStatus", true},
		{"a product name", reflect.TypeFor[store.FlowRow](), "FlowRow", false},
		{"a product name ending in the Go name", reflect.TypeFor[pcaprec.Status](), "RecordingStatus", false},
		{"another package's name first is a product name", reflect.TypeFor[record.AlertEvent](), "CaptureAlertEvent", false},
		{"a name unlike the Go name", reflect.TypeFor[store.IfaceRate](), "InterfaceRate", false},
	} {
		if got := packageDerived(tt.t, tt.name); got != tt.want {
			t.Errorf("%s: packageDerived(%s, %q) = %v, want %v", tt.desc, tt.t, tt.name, got, tt.want)
		}
	}
}

// TestSchemaNames holds the contract's names: every declared name is a
// product name (none is derived from a Go package), each names one
// type, and the document's components are exactly the declared names and
// the enumerations. A body type without a declared name fails earlier:
// router.Render refuses it, so newTestServer fails.
func TestSchemaNames(t *testing.T) {
	names := schemaNames()
	byName := map[string]reflect.Type{}
	for typ, name := range names {
		if packageDerived(typ, name) {
			t.Errorf("%s is named %s, derived from a Go package: declare a product name", typ, name)
		}
		if prev, ok := byName[name]; ok {
			t.Errorf("%s and %s are both named %s", prev, typ, name)
		}
		byName[name] = typ
	}

	s, _ := newTestServer(t, &fakePinger{}, nil)
	var doc struct {
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(s.doc.JSON(), &doc); err != nil {
		t.Fatal(err)
	}
	var got, want []string
	for name := range doc.Components.Schemas {
		got = append(got, name)
	}
	for name := range byName {
		want = append(want, name)
	}
	for _, e := range enums() {
		want = append(want, e.Name)
	}
	sort.Strings(got)
	sort.Strings(want)
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("document components differ from the declared names and enums (-got, +want):\n%s", diff)
	}
}

// TestNoStoreRowIsABody: a body is an app/api response type, never a
// store row, so a change to the store cannot change the API unseen. Every
// body type is in schemaNames (Render refuses others), so the table is
// where to look.
func TestNoStoreRowIsABody(t *testing.T) {
	for typ, name := range schemaNames() {
		if p := typ.PkgPath(); p == "netmon/store" || strings.HasPrefix(p, "netmon/store/") {
			t.Errorf("%s (schema %s) is a store row answered as a body: declare an app/api response type", typ, name)
		}
	}
}
