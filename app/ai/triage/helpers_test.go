package triage

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"netmon/app/ai"
	"netmon/store"
	"netmon/store/record"
)

// call is one Analyze call as the fake saw it.
type call struct {
	who    store.AuditActor
	scope  ai.Scope
	source string
	task   string
}

// fakeAnalyst answers every Analyze with a fixed text; refs in fail
// answer an error, refs in panics panic (the real Service is the lead's).
type fakeAnalyst struct {
	text   string
	fail   map[string]bool
	panics map[string]bool

	mu    sync.Mutex
	calls []call
}

func (f *fakeAnalyst) Analyze(_ context.Context, who store.AuditActor, scope ai.Scope, source, task string) (ai.Analysis, error) {
	f.mu.Lock()
	f.calls = append(f.calls, call{who: who, scope: scope, source: source, task: task})
	n := len(f.calls)
	f.mu.Unlock()
	if f.panics[scope.Ref] {
		panic("analyst exploded on " + scope.Ref)
	}
	if f.fail[scope.Ref] {
		return ai.Analysis{}, fmt.Errorf("provider answered 503")
	}
	return ai.Analysis{ConversationID: int64(n), Scope: scope, Source: source, Provider: "local", Model: "m1", Text: f.text}, nil
}

func (f *fakeAnalyst) Calls() []call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

// refs lists the calls as "scope:ref", in order.
func (f *fakeAnalyst) refs() []string {
	out := []string{}
	for _, c := range f.Calls() {
		out = append(out, c.scope.Kind+":"+c.scope.Ref)
	}
	return out
}

// fakeMailer records the mails.
type fakeMailer struct {
	err error

	mu    sync.Mutex
	mails []mail
}

type mail struct {
	to                                   []string
	subject, body, filename, contentType string
	data                                 []byte
}

func (f *fakeMailer) SendReport(_ context.Context, to []string, subject, body, filename, contentType string, data []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mails = append(f.mails, mail{to: to, subject: subject, body: body, filename: filename, contentType: contentType, data: data})
	return f.err
}

func (f *fakeMailer) Mails() []mail {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.mails)
}

// fakeConversations says which "scope:ref" already have a triage
// conversation.
type fakeConversations map[string]bool

func (f fakeConversations) HasAIConversation(_ context.Context, kind, ref, source string) (bool, error) {
	return source == ai.SourceTriage && f[kind+":"+ref], nil
}

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// counter reads one series of a counter family registered on reg (0
// when the series does not exist).
func counter(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if v, ok := labels[lp.GetName()]; !ok || v != lp.GetValue() {
					continue next
				}
			}
			if m.Counter != nil {
				return m.Counter.GetValue()
			}
			return m.Gauge.GetValue()
		}
	}
	return 0
}

// seedSeq makes each seeded row's key unique.
var seedSeq atomic.Int64

// seed inserts an incident (kind incident) or an alert event (kind
// anomaly) of severity sev at ts and returns its ref.
func seed(t *testing.T, db *store.DB, kind string, sev int, ts int64) string {
	t.Helper()
	ctx := t.Context()
	if kind == ai.ScopeIncident {
		seq := seedSeq.Add(1)
		in, _, err := db.UpsertIncident(ctx, record.Incident{Key: fmt.Sprintf("r1|agent%d", seq), Rule: 1, AgentID: seq, Severity: sev,
			Title: "port scan", OpenedTS: ts, UpdatedTS: ts}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(in.ID)
	}
	e, err := db.InsertAlertEvent(ctx, record.AlertEvent{TS: ts, Kind: "port", Key: fmt.Sprint(seedSeq.Add(1)), Message: "new listening port", Severity: sev, State: record.AlertFiring})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(e.ID)
}
