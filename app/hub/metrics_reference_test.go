package hub

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"netmon/app/config"
)

var updateMetrics = flag.Bool("update-metrics", false, "rewrite ui/docs/92-metrics.md from the hub's registry")

// recordingRegistry is the hub's registry that also keeps every collector
// registered, so the reference lists a labelled metric before it has a
// first series (a registry's Gather shows only metrics with values).
type recordingRegistry struct {
	*prometheus.Registry
	mu         sync.Mutex
	collectors []prometheus.Collector
}

func (r *recordingRegistry) Register(c prometheus.Collector) error {
	if err := r.Registry.Register(c); err != nil {
		return err
	}
	r.mu.Lock()
	r.collectors = append(r.collectors, c)
	r.mu.Unlock()
	return nil
}

func (r *recordingRegistry) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := r.Register(c); err != nil {
			panic(err)
		}
	}
}

type metricRef struct{ name, typ, labels, help string }

var descRE = regexp.MustCompile(`^Desc\{fqName: (".*?"), help: (".*"), unit: ".*?", constLabels: \{.*?\}, variableLabels: \{(.*?)\}\}$`)

// TestMetricsReference: the manual's metric list is what the hub's
// registry holds — every collector registered by a hub with the flow and
// syslog receivers on, with its type, labels and help — so a metric added,
// renamed or re-described without regenerating the page fails here:
//
//	go test ./app/hub -run TestMetricsReference -update-metrics
func TestMetricsReference(t *testing.T) {
	rec := &recordingRegistry{Registry: newRegistry()}
	h := startTestHubWith(t, filepath.Join(t.TempDir(), "netmon.db"), func(c *config.HubConfig) {
		c.Flows.Addr, c.Syslog.Addr = "127.0.0.1:0", "127.0.0.1:0"
	}, func(h *Hub) { h.reg = rec })
	_ = h
	refs := map[string]metricRef{}
	rec.mu.Lock()
	collectors := append([]prometheus.Collector(nil), rec.collectors...)
	rec.mu.Unlock()
	for _, c := range collectors {
		typ := vecType(c)
		ch := make(chan *prometheus.Desc, 64)
		go func() { c.Describe(ch); close(ch) }()
		for d := range ch {
			m := descRE.FindStringSubmatch(d.String())
			if m == nil {
				t.Fatalf("unexpected descriptor %s", d)
			}
			name, _ := strconv.Unquote(m[1])
			help, _ := strconv.Unquote(m[2])
			refs[name] = metricRef{name: name, typ: typ, labels: m[3], help: help}
		}
	}
	// The types of collectors that are not vectors, and the metrics of
	// the registry itself (build info, Go and process), from a gather.
	fams, err := rec.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		r, ok := refs[f.GetName()]
		if !ok {
			var labels []string
			if len(f.GetMetric()) > 0 {
				for _, lp := range f.GetMetric()[0].GetLabel() {
					labels = append(labels, lp.GetName())
				}
			}
			r = metricRef{name: f.GetName(), help: f.GetHelp(), labels: strings.Join(labels, ",")}
			if f.GetName() == "netmon_build_info" {
				r.labels = "" // constant labels: the build, not a dimension
			}
		}
		r.typ = strings.ToLower(dto.MetricType_name[int32(f.GetType())])
		refs[f.GetName()] = r
	}
	var names []string
	for n, r := range refs {
		if r.typ == "" {
			t.Fatalf("metric %s: no type (a collector that is neither a vector nor gathered)", n)
		}
		names = append(names, n)
	}
	sort.Strings(names)
	var b bytes.Buffer
	b.WriteString(`# Metrics

<!-- Generated from the hub's registry by
go test ./app/hub -run TestMetricsReference -update-metrics. Do not edit by hand. -->

What ` + "`/metrics`" + ` serves (to an admin, or to the bearer of ` + "`-metrics-token`" + `): every
metric a hub registers with the flow and syslog receivers on, with its
type, labels and help text. Labels never carry a remote address; those
with many values are capped (see [Operations](12-operations.md)). The
Grafana dashboard ` + "`ui/grafana/netmon.json`" + ` charts the main ones.

| metric | type | labels | meaning |
|---|---|---|---|
`)
	netmon := 0
	for _, n := range names {
		r := refs[n]
		labels := "—"
		if r.labels != "" {
			labels = "`" + strings.ReplaceAll(r.labels, ",", "`, `") + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", n, r.typ, labels, strings.ReplaceAll(strings.ReplaceAll(r.help, "|", `\|`), "\n", " "))
		if strings.HasPrefix(n, "netmon_") {
			netmon++
		}
	}
	if netmon < 40 {
		t.Fatalf("only %d netmon_ metrics registered", netmon)
	}
	page := filepath.Join("..", "..", "ui", "docs", "92-metrics.md")
	if *updateMetrics {
		if err := os.WriteFile(page, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(page)
	if err != nil || !bytes.Equal(want, b.Bytes()) {
		t.Fatalf("%s is not what the registry holds (%v): regenerate with go test ./app/hub -run TestMetricsReference -update-metrics", page, err)
	}
}

// vecType is the type of a vector collector ("" for other collectors,
// typed from a gather).
func vecType(c prometheus.Collector) string {
	switch c.(type) {
	case *prometheus.CounterVec:
		return "counter"
	case *prometheus.GaugeVec:
		return "gauge"
	case *prometheus.HistogramVec:
		return "histogram"
	case *prometheus.SummaryVec:
		return "summary"
	}
	return ""
}
