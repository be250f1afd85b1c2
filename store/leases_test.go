package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"netmon/store"
	"netmon/store/storetest"
)

// t0 is a fixed instant for the tests that pass their own clock.
var t0 = time.UnixMilli(1795000000000)

// TestLeaseAcquire walks one lease through its life with explicit clocks:
// a renewal keeps the token, a takeover of an expired lease raises it, a
// release frees the lease at once, and a stale release changes nothing.
func TestLeaseAcquire(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := t.Context()
		if _, _, _, err := db.LeaseHolder(ctx, "hub"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("LeaseHolder of a lease never taken: %v, want ErrNotFound", err)
		}
		const ttl = 10 * time.Second
		for i, st := range []struct {
			desc      string
			op        string // acquire or release
			holder    string
			at        time.Duration // after t0
			token     int64         // release: the token given
			wantOK    bool
			wantToken int64
			// the row afterwards
			wantHolder  string
			wantToken2  int64
			wantExpires time.Duration // after t0; -1: 0 (released)
		}{
			{"first take", "acquire", "a", 0, 0, true, 1, "a", 1, 10 * time.Second},
			{"another holder while it runs", "acquire", "b", 9999 * time.Millisecond, 0, false, 0, "a", 1, 10 * time.Second},
			{"renewal keeps the token", "acquire", "a", 5 * time.Second, 0, true, 1, "a", 1, 15 * time.Second},
			{"renewal after its own expiry keeps it too", "acquire", "a", 16 * time.Second, 0, true, 1, "a", 1, 26 * time.Second},
			{"takeover at the expiry raises the token", "acquire", "b", 26 * time.Second, 0, true, 2, "b", 2, 36 * time.Second},
			{"the old holder is refused", "acquire", "a", 27 * time.Second, 0, false, 0, "b", 2, 36 * time.Second},
			{"a release with a stale token changes nothing", "release", "b", 28 * time.Second, 1, false, 0, "b", 2, 36 * time.Second},
			{"a release by another holder changes nothing", "release", "a", 28 * time.Second, 2, false, 0, "b", 2, 36 * time.Second},
			{"release", "release", "b", 28 * time.Second, 2, false, 0, "", 2, -1},
			{"taken at once after a release, token raised", "acquire", "a", 28 * time.Second, 0, true, 3, "a", 3, 38 * time.Second},
			{"the releaser coming back is refused", "acquire", "b", 29 * time.Second, 0, false, 0, "a", 3, 38 * time.Second},
		} {
			switch st.op {
			case "acquire":
				tok, ok, err := db.AcquireLease(ctx, "hub", st.holder, t0.Add(st.at), ttl)
				if err != nil || ok != st.wantOK || tok != st.wantToken {
					t.Fatalf("step %d (%s): AcquireLease = %d, %v, %v; want %d, %v", i, st.desc, tok, ok, err, st.wantToken, st.wantOK)
				}
			case "release":
				if err := db.ReleaseLease(ctx, "hub", st.holder, st.token); err != nil {
					t.Fatalf("step %d (%s): ReleaseLease: %v", i, st.desc, err)
				}
			}
			holder, tok, exp, err := db.LeaseHolder(ctx, "hub")
			wantExp := t0.Add(st.wantExpires)
			if st.wantExpires < 0 {
				wantExp = time.UnixMilli(0)
			}
			if err != nil || holder != st.wantHolder || tok != st.wantToken2 || !exp.Equal(wantExp) {
				t.Fatalf("step %d (%s): LeaseHolder = %q, %d, %s, %v; want %q, %d, %s", i, st.desc, holder, tok, exp, err,
					st.wantHolder, st.wantToken2, wantExp)
			}
		}
		// Another lease name is another row.
		if tok, ok, err := db.AcquireLease(ctx, "other", "b", t0, ttl); err != nil || !ok || tok != 1 {
			t.Errorf("AcquireLease(other) = %d, %v, %v; want 1, true", tok, ok, err)
		}
		if _, _, err := db.AcquireLease(ctx, "hub", "a", t0, 0); err == nil {
			t.Error("AcquireLease with ttl 0 succeeded, want an error")
		}
	})
}

// TestLeaseRace: 20 replicas racing for the lease, round after round,
// each round after the previous lease expired: exactly one wins, with the
// token raised by exactly one (the first round races on the INSERT;
// each round's replicas are new, so the last winner does not renew).
func TestLeaseRace(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		const n, rounds = 20, 5
		const ttl = time.Second
		for r := range rounds {
			now := t0.Add(time.Duration(r) * ttl)
			start := make(chan struct{})
			type result struct {
				tok int64
				ok  bool
				err error
			}
			results := make([]result, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					<-start
					tok, ok, err := db.AcquireLease(t.Context(), "hub", fmt.Sprintf("round%d-replica%d", r, i), now, ttl)
					results[i] = result{tok, ok, err}
				})
			}
			close(start)
			wg.Wait()
			winners := 0
			for i, res := range results {
				if res.err != nil {
					t.Fatalf("round %d replica %d: %v", r, i, res.err)
				}
				if res.ok {
					winners++
					if res.tok != int64(r+1) {
						t.Errorf("round %d: winner's token %d, want %d", r, res.tok, r+1)
					}
				}
			}
			if winners != 1 {
				t.Fatalf("round %d: %d winners, want exactly 1", r, winners)
			}
		}
	})
}

// fencedWrite runs a transaction that marks the lease "probe" (a row the
// test reads back) and then fences on "hub" with token, as a leader's
// loop does; it returns the transaction's error.
func fencedWrite(ctx context.Context, db *store.DB, token int64, mark int64) error {
	return db.InTx(ctx, func(tx *store.Tx) error {
		if _, err := tx.SQL().ExecContext(ctx, `UPDATE leases SET renewed_at = $1 WHERE name = 'probe'`, mark); err != nil {
			return err
		}
		return tx.Fence(ctx, "hub", token)
	})
}

func probeMark(t *testing.T, db *store.DB) int64 {
	t.Helper()
	var v int64
	if err := db.Reader().QueryRowContext(t.Context(), `SELECT renewed_at FROM leases WHERE name = 'probe'`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestLeaseFence: the holder's fenced write commits; after a takeover the
// old token's write is refused with ErrFenced and rolled back; an expired
// lease fences its holder even before anyone took it over.
func TestLeaseFence(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := t.Context()
		now := time.Now()
		if _, _, err := db.AcquireLease(ctx, "probe", "test", now, time.Hour); err != nil {
			t.Fatal(err)
		}
		old, ok, err := db.AcquireLease(ctx, "hub", "a", now, time.Minute)
		if err != nil || !ok {
			t.Fatalf("AcquireLease(a) = %v, %v", ok, err)
		}
		if err := fencedWrite(ctx, db, old, 1); err != nil {
			t.Fatalf("the holder's fenced write: %v", err)
		}
		if err := db.CheckFence(ctx, "hub", old); err != nil {
			t.Errorf("CheckFence of the holder: %v", err)
		}
		// b's clock is two minutes on: a's lease has expired for it.
		tok, ok, err := db.AcquireLease(ctx, "hub", "b", now.Add(2*time.Minute), time.Minute)
		if err != nil || !ok || tok != old+1 {
			t.Fatalf("takeover = %d, %v, %v; want %d, true", tok, ok, err, old+1)
		}
		if err := fencedWrite(ctx, db, old, 2); !errors.Is(err, store.ErrFenced) {
			t.Errorf("the old holder's fenced write: %v, want ErrFenced", err)
		}
		if err := db.CheckFence(ctx, "hub", old); !errors.Is(err, store.ErrFenced) {
			t.Errorf("CheckFence of the old holder: %v, want ErrFenced", err)
		}
		if got := probeMark(t, db); got != 1 {
			t.Errorf("probe mark %d after the refused write, want 1 (rolled back)", got)
		}
		// An expired lease, not yet taken over, fences its holder too.
		if _, _, err := db.AcquireLease(ctx, "expired", "c", now.Add(-2*time.Minute), time.Minute); err != nil {
			t.Fatal(err)
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.Fence(ctx, "expired", 1) }); !errors.Is(err, store.ErrFenced) {
			t.Errorf("fence on an expired lease: %v, want ErrFenced", err)
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.Fence(ctx, "never", 1) }); !errors.Is(err, store.ErrFenced) {
			t.Errorf("fence on a lease never taken: %v, want ErrFenced", err)
		}
	})
}

// TestLeaseFenceHoldsTakeover: between a passed Fence and the commit the
// lease cannot pass: a takeover attempted then waits for the commit (the
// write lock on SQLite, the row's share lock on PostgreSQL) and raises the
// token after it, so the fenced write is ordered before the new leader.
func TestLeaseFenceHoldsTakeover(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := t.Context()
		now := time.Now()
		if _, _, err := db.AcquireLease(ctx, "probe", "test", now, time.Hour); err != nil {
			t.Fatal(err)
		}
		old, _, err := db.AcquireLease(ctx, "hub", "a", now, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		type result struct {
			tok int64
			ok  bool
			err error
		}
		done := make(chan result, 1)
		err = db.InTx(ctx, func(tx *store.Tx) error {
			if err := tx.Fence(ctx, "hub", old); err != nil {
				return err
			}
			go func() {
				tok, ok, err := db.AcquireLease(ctx, "hub", "b", now.Add(2*time.Minute), time.Minute)
				done <- result{tok, ok, err}
			}()
			select {
			case r := <-done:
				return fmt.Errorf("the takeover returned (%+v) while the fenced transaction was open", r)
			case <-time.After(300 * time.Millisecond):
			}
			_, err := tx.SQL().ExecContext(ctx, `UPDATE leases SET renewed_at = 7 WHERE name = 'probe'`)
			return err
		})
		if err != nil {
			t.Fatalf("fenced transaction: %v", err)
		}
		r := <-done
		if r.err != nil || !r.ok || r.tok != old+1 {
			t.Errorf("takeover after the commit = %+v, want token %d", r, old+1)
		}
		if got := probeMark(t, db); got != 7 {
			t.Errorf("probe mark %d, want 7 (the fenced write committed)", got)
		}
	})
}

// TestLeaseFencePausedHolder: a holder that passed Fence and then stalls
// inside its transaction past its lease (a SIGSTOP). PostgreSQL ends its
// session when the lease runs out, so its write is lost and the row
// unlocked for a takeover. SQLite has no such timeout: the stalled
// transaction keeps the file's write lock, so no other replica can take
// over or write before it commits, and its write lands before theirs.
func TestLeaseFencePausedHolder(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := t.Context()
		if _, _, err := db.AcquireLease(ctx, "probe", "test", time.Now(), time.Hour); err != nil {
			t.Fatal(err)
		}
		tok, _, err := db.AcquireLease(ctx, "hub", "a", time.Now(), 300*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		err = db.InTx(ctx, func(tx *store.Tx) error {
			if err := tx.Fence(ctx, "hub", tok); err != nil {
				return err
			}
			time.Sleep(800 * time.Millisecond) // paused past the lease
			_, err := tx.SQL().ExecContext(ctx, `UPDATE leases SET renewed_at = 9 WHERE name = 'probe'`)
			return err
		})
		committed := db.Dialect() == store.SQLite
		if (err == nil) != committed {
			t.Errorf("the paused holder's transaction: error %v, want committed %v", err, committed)
		}
		if got := probeMark(t, db); (got == 9) != committed {
			t.Errorf("probe mark %d, want the write committed: %v", got, committed)
		}
		// Either way the lease is free for another replica now.
		if tok2, ok, err := db.AcquireLease(ctx, "hub", "b", time.Now(), time.Minute); err != nil || !ok || tok2 != tok+1 {
			t.Errorf("takeover = %d, %v, %v; want %d, true", tok2, ok, err, tok+1)
		}
	})
}
