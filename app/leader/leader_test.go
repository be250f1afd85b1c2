package leader_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"netmon/app/leader"
	"netmon/store"
	"netmon/store/storetest"
)

// The tests' lease: short, so takeovers happen within the test's second.
const (
	ttl   = 600 * time.Millisecond
	renew = 200 * time.Millisecond
)

// replica is one hub of the test: its own store (its own pools, as a
// separate process would have) behind a switch that stalls or fails its
// lease calls, and its election.
type replica struct {
	db  *store.DB
	sw  *switchStore
	l   *leader.Leader
	reg *prometheus.Registry
}

// switchStore passes the lease calls to the store unless told to fail
// them (a database error) or to stall them (a paused process: the call
// blocks, deaf to its context, until resumed, then runs with the clock it
// read before the pause).
type switchStore struct {
	*store.DB
	fail   atomic.Bool
	stall  atomic.Bool
	resume chan struct{}
}

func (s *switchStore) AcquireLease(ctx context.Context, name, holder string, now time.Time, ttl time.Duration) (int64, bool, error) {
	if s.fail.Load() {
		return 0, false, errors.New("connection refused (test)")
	}
	if s.stall.Load() {
		<-s.resume
		ctx = context.Background()
	}
	return s.DB.AcquireLease(ctx, name, holder, now, ttl)
}

// replicas opens n stores on dsn and builds (without starting) their
// elections, named r0, r1, ...; Stop runs at the end of the test, after
// any stalled call is resumed.
func replicas(t *testing.T, dsn string, n int) []*replica {
	t.Helper()
	var out []*replica
	for i := range n {
		db, err := store.Open(t.Context(), storetest.Logger(t), store.Config{DSN: dsn, MaxConns: 4})
		if err != nil {
			t.Fatalf("store.Open: %v", err)
		}
		r := &replica{db: db, sw: &switchStore{DB: db, resume: make(chan struct{})}, reg: prometheus.NewRegistry()}
		r.l = leader.New(storetest.Logger(t).With("test_replica", i), leader.Config{TTL: ttl, Renew: renew, ReplicaID: fmt.Sprintf("r%d", i)},
			leader.Deps{Store: r.sw, Registerer: r.reg})
		t.Cleanup(func() {
			_ = r.l.Stop()
			_ = db.Close()
		})
		out = append(out, r)
	}
	t.Cleanup(func() {
		for _, r := range out {
			if r.sw.stall.Load() {
				close(r.sw.resume)
			}
		}
	})
	return out
}

// leaders returns the replicas that say they lead.
func leaders(rs []*replica) []int {
	var out []int
	for i, r := range rs {
		if r.l.IsLeader() {
			out = append(out, i)
		}
	}
	return out
}

// watch samples every millisecond for d and fails on any sample with
// more than one leader, or (when exactlyOne) with none.
func watch(t *testing.T, rs []*replica, d time.Duration, exactlyOne bool) {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(time.Millisecond) {
		if got := leaders(rs); len(got) > 1 || (exactlyOne && len(got) != 1) {
			t.Fatalf("leaders %v at a sample, want exactly one", got)
		}
	}
}

// waitLeader waits up to within for one replica to lead and returns it.
func waitLeader(t *testing.T, rs []*replica, within time.Duration) (int, time.Duration) {
	t.Helper()
	start := time.Now()
	for time.Since(start) < within {
		switch got := leaders(rs); len(got) {
		case 1:
			return got[0], time.Since(start)
		case 0:
			time.Sleep(time.Millisecond)
		default:
			t.Fatalf("leaders %v, want at most one", got)
		}
	}
	t.Fatalf("no leader within %s", within)
	return -1, 0
}

func metric(t *testing.T, r *replica, name string) float64 {
	t.Helper()
	mfs, err := r.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			m := mf.GetMetric()[0]
			if g := m.GetGauge(); g != nil {
				return g.GetValue()
			}
			return m.GetCounter().GetValue()
		}
	}
	t.Fatalf("metric %s not registered", name)
	return 0
}

// TestOneLeader: two and three replicas on one database: exactly one
// leads at every sample; when it stops, another leads within one lease
// period (in fact within one renew period: the stop released the lease),
// with the next token, and again exactly one leads.
func TestOneLeader(t *testing.T) {
	for _, n := range []int{2, 3} {
		t.Run(fmt.Sprintf("%d replicas", n), func(t *testing.T) {
			storetest.EachDSN(t, func(t *testing.T, dsn string) {
				rs := replicas(t, dsn, n)
				var changes []string
				var mu sync.Mutex
				for i, r := range rs {
					r.l.OnChange(func(leading bool) {
						mu.Lock()
						changes = append(changes, fmt.Sprintf("r%d:%v", i, leading))
						mu.Unlock()
					})
					if err := r.l.Start(); err != nil {
						t.Fatal(err)
					}
				}
				// The first Start's first attempt won: it leads on return.
				if got := leaders(rs); len(got) != 1 || got[0] != 0 {
					t.Fatalf("leaders after Start %v, want [0]", got)
				}
				watch(t, rs, 800*time.Millisecond, true)
				first := rs[0]
				tok := first.l.Token()
				if tok != 1 {
					t.Errorf("first leader's token %d, want 1", tok)
				}
				for i, r := range rs {
					want := map[bool]float64{true: 1, false: 0}[i == 0]
					if got := metric(t, r, "netmon_leader"); got != want {
						t.Errorf("r%d netmon_leader %v, want %v", i, got, want)
					}
					if got := metric(t, r, "netmon_leader_changes_total"); got != want {
						t.Errorf("r%d netmon_leader_changes_total %v, want %v", i, got, want)
					}
				}

				if err := first.l.Stop(); err != nil {
					t.Fatalf("Stop: %v", err)
				}
				if first.l.IsLeader() || first.l.Token() != 0 {
					t.Errorf("after Stop: IsLeader %v, Token %d; want false, 0", first.l.IsLeader(), first.l.Token())
				}
				next, took := waitLeader(t, rs, ttl)
				t.Logf("replica r%d took over %s after the leader stopped", next, took)
				if next == 0 {
					t.Fatal("the stopped replica leads again")
				}
				if got := rs[next].l.Token(); got != tok+1 {
					t.Errorf("new leader's token %d, want %d", got, tok+1)
				}
				watch(t, rs, 500*time.Millisecond, true)
				if got := metric(t, first, "netmon_leader_changes_total"); got != 2 {
					t.Errorf("stopped replica's netmon_leader_changes_total %v, want 2", got)
				}
				mu.Lock()
				want := []string{"r0:true", "r0:false", fmt.Sprintf("r%d:true", next)}
				if fmt.Sprint(changes) != fmt.Sprint(want) {
					t.Errorf("hooks heard %v, want %v", changes, want)
				}
				mu.Unlock()
			})
		})
	}
}

// stepsDown is the common part of the stall and the error cases: replica
// 0 leads, break() makes its renewals stall or fail; it must step down by
// itself before its lease expires in the database, the other replica
// must take over after the expiry with the next token, and the old
// token's fenced write must be refused.
func stepsDown(t *testing.T, dsn string, breakIt func(*replica)) *replica {
	t.Helper()
	rs := replicas(t, dsn, 2)
	a, b := rs[0], rs[1]
	down := make(chan time.Time, 4)
	a.l.OnChange(func(leading bool) {
		if !leading {
			down <- time.Now()
		}
	})
	for _, r := range rs {
		if err := r.l.Start(); err != nil {
			t.Fatal(err)
		}
	}
	watch(t, rs, 300*time.Millisecond, true)
	if !a.l.IsLeader() {
		t.Fatal("replica 0 does not lead")
	}
	tok := a.l.Token()
	breakIt(a)
	var at time.Time
	select {
	case at = <-down:
	case <-time.After(2 * ttl):
		t.Fatalf("the broken leader did not step down within %s", 2*ttl)
	}
	holder, tokNow, expires, err := b.db.LeaseHolder(t.Context(), "hub")
	if err != nil {
		t.Fatal(err)
	}
	// The expiry in the row is that of a's last renewal: nobody can have
	// taken over before it, and a stepped down a renew period earlier.
	if holder != "r0" || tokNow != tok {
		t.Fatalf("lease at the step-down: %q token %d, want r0 token %d", holder, tokNow, tok)
	}
	if margin := expires.Sub(at); margin <= 0 {
		t.Errorf("stepped down %s after the lease expired, want before", -margin)
	} else {
		t.Logf("stepped down %s before the lease expired", margin)
	}
	if a.l.IsLeader() || a.l.Token() != 0 {
		t.Errorf("after stepping down: IsLeader %v, Token %d", a.l.IsLeader(), a.l.Token())
	}
	next, _ := waitLeader(t, rs, ttl+renew)
	if next != 1 {
		t.Fatalf("leader r%d after the step-down, want r1", next)
	}
	if got := b.l.Token(); got != tok+1 {
		t.Errorf("new leader's token %d, want %d", got, tok+1)
	}
	t.Logf("r1 took over %s after r0 stepped down", time.Since(at))
	// The old leader's fenced write is refused and rolled back.
	err = a.db.InTx(t.Context(), func(tx *store.Tx) error { return tx.Fence(t.Context(), "hub", tok) })
	if !errors.Is(err, store.ErrFenced) {
		t.Errorf("old leader's Fence: %v, want ErrFenced", err)
	}
	if err := b.db.InTx(t.Context(), func(tx *store.Tx) error { return tx.Fence(t.Context(), "hub", tok+1) }); err != nil {
		t.Errorf("new leader's Fence: %v", err)
	}
	return a
}

// TestStalledLeaderStepsDown: a leader whose renewal call hangs (a paused
// process) steps down on its own deadline; when the call finally runs,
// with the clock read before the pause, it does not win the lease back.
func TestStalledLeaderStepsDown(t *testing.T) {
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		a := stepsDown(t, dsn, func(r *replica) { r.sw.stall.Store(true) })
		a.sw.stall.Store(false)
		close(a.sw.resume)
		time.Sleep(2 * renew)
		if a.l.IsLeader() {
			t.Error("the resumed replica leads again while the other holds the lease")
		}
	})
}

// TestFailingLeaderStepsDown: a leader whose database fails steps down
// before its lease expires and counts the errors; once the database is
// back it stays a follower of the new leader.
func TestFailingLeaderStepsDown(t *testing.T) {
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		a := stepsDown(t, dsn, func(r *replica) { r.sw.fail.Store(true) })
		if got := metric(t, a, "netmon_leader_renew_errors_total"); got < 1 {
			t.Errorf("netmon_leader_renew_errors_total %v, want at least 1", got)
		}
		a.sw.fail.Store(false)
		time.Sleep(2 * renew)
		if a.l.IsLeader() {
			t.Error("the recovered replica leads again while the other holds the lease")
		}
	})
}

// TestStartRefuses: a configuration whose step-down margin would be
// negative, and a missing store, fail at Start.
func TestStartRefuses(t *testing.T) {
	for _, tt := range []struct {
		desc string
		cfg  leader.Config
		deps leader.Deps
	}{
		{"renew more than half the ttl", leader.Config{TTL: time.Second, Renew: 600 * time.Millisecond}, leader.Deps{Store: &switchStore{}}},
		{"no store", leader.Config{}, leader.Deps{}},
	} {
		if err := leader.New(nil, tt.cfg, tt.deps).Start(); err == nil {
			t.Errorf("%s: Start succeeded, want an error", tt.desc)
		}
	}
	l := leader.New(nil, leader.Config{}, leader.Deps{Store: &switchStore{}})
	if id := l.ReplicaID(); id == "" || l.Name() != "hub" {
		t.Errorf("defaults: replica %q, name %q", id, l.Name())
	}
}
