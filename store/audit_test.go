package store_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"netmon/store"
	"netmon/store/storetest"
)

// TestAuditHashGolden pins the hash encoding, a compatibility promise:
// stored chains must verify under every later version. The values were
// computed independently (Python hashlib over the documented netstrings).
func TestAuditHashGolden(t *testing.T) {
	v1 := store.AuditEvent{
		ID: 42, TS: 1700000123, Username: "alice", Role: "admin", Action: "user.create",
		Target: "users/7", Detail: `{"username":"bob"}`, IP: "192.0.2.1", PrevHash: strings.Repeat("ab", 32),
	}
	v2 := v1
	v2.ActorType, v2.RequestID, v2.UserAgent, v2.Result = "user", "req-1", "curl/8.5.0", "ok"
	v2.AfterJSON = `{"role":"viewer","password":"***"}`
	tests := []struct {
		desc string
		e    store.AuditEvent
		want string
	}{
		{"documented example", store.AuditEvent{ID: 1, TS: 1700000000, Username: "admin", Action: "login", PrevHash: store.AuditGenesis},
			"262bbe1a4d4ec5774d4d52142d729545aafeeeadaf453358bc74657bbe7ec354"},
		{"v1 record", v1, "28f773f8dda641ab328bb0646d3600823f1aa9eef6d51df961873b1e3760d6af"},
		{"v2 record", v2, "3b31844716dd91004221c098a6b9ef126b6e5e0e9904fa9e9bedae32e82a72b5"},
		{"hash field is not hashed", withHash(v1, "anything"), "28f773f8dda641ab328bb0646d3600823f1aa9eef6d51df961873b1e3760d6af"},
	}
	for _, tt := range tests {
		if got := store.AuditHash(tt.e); got != tt.want {
			t.Errorf("%s: AuditHash = %s, want %s", tt.desc, got, tt.want)
		}
	}
}

func withHash(e store.AuditEvent, h string) store.AuditEvent { e.Hash = h; return e }

// TestAuditHashUnambiguous: moving bytes between fields changes the hash.
func TestAuditHashUnambiguous(t *testing.T) {
	pairs := []struct {
		desc string
		a, b store.AuditEvent
	}{
		{"username/role boundary", store.AuditEvent{Username: "ab", Role: "c"}, store.AuditEvent{Username: "a", Role: "bc"}},
		{"separator inside a field", store.AuditEvent{Target: "1:x,", Detail: ""}, store.AuditEvent{Target: "", Detail: "1:x,"}},
		{"id/ts boundary", store.AuditEvent{ID: 12, TS: 3}, store.AuditEvent{ID: 1, TS: 23}},
		{"empty v2 field set vs unset", store.AuditEvent{Result: "ok"}, store.AuditEvent{Detail: "ok"}},
	}
	for _, p := range pairs {
		if store.AuditHash(p.a) == store.AuditHash(p.b) {
			t.Errorf("%s: same hash", p.desc)
		}
	}
}

// appendN appends n events, v2 fields on the even ones, and returns them
// as stored.
func appendN(t *testing.T, db *store.DB, n int) []store.AuditEvent {
	t.Helper()
	var out []store.AuditEvent
	for i := 1; i <= n; i++ {
		e := store.AuditEvent{Username: "admin", Role: "admin", Action: "test.append", Target: fmt.Sprintf("things/%d", i), IP: "127.0.0.1"}
		if i%2 == 0 {
			e.ActorType, e.RequestID, e.Result, e.AfterJSON = "user", fmt.Sprintf("req-%d", i), "ok", `{"n":1}`
		}
		got, err := db.AppendAudit(t.Context(), e)
		if err != nil {
			t.Fatalf("AppendAudit %d: %v", i, err)
		}
		out = append(out, got)
	}
	return out
}

func verify(t *testing.T, db *store.DB) store.AuditVerify {
	t.Helper()
	res, err := db.VerifyAudit(t.Context())
	if err != nil {
		t.Fatalf("VerifyAudit: %v", err)
	}
	return res
}

func mustExec(t *testing.T, db *store.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.Writer().ExecContext(t.Context(), q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// put writes every column of e into row id (the row must exist).
func put(t *testing.T, db *store.DB, id int64, e store.AuditEvent) {
	t.Helper()
	mustExec(t, db, `UPDATE audit_events SET ts = $2, username = $3, role = $4, action = $5, target = $6, detail = $7,
		ip = $8, prev_hash = $9, hash = $10, actor_type = $11, request_id = $12, user_agent = $13, result = $14,
		before_json = $15, after_json = $16 WHERE id = $1`, id, e.TS, e.Username, e.Role, e.Action, e.Target, e.Detail,
		e.IP, e.PrevHash, e.Hash, e.ActorType, e.RequestID, e.UserAgent, e.Result, e.BeforeJSON, e.AfterJSON)
}

// insert writes e as a new row, bypassing the chain.
func insert(t *testing.T, db *store.DB, e store.AuditEvent) {
	t.Helper()
	mustExec(t, db, `INSERT INTO audit_events (id, ts, prev_hash, hash) VALUES ($1, 0, '', '')`, e.ID)
	put(t, db, e.ID, e)
}

// shiftFrom renumbers rows with id >= k to id+1, through negative ids so
// the primary key never collides mid-statement.
func shiftFrom(t *testing.T, db *store.DB, k int64) {
	t.Helper()
	mustExec(t, db, `UPDATE audit_events SET id = -id WHERE id >= $1`, k)
	mustExec(t, db, `UPDATE audit_events SET id = 1 - id WHERE id < 0`)
}

// TestAuditTamper is RELIABILITY case 14: each alteration of a 10-record
// chain is reported at the first bad record.
func TestAuditTamper(t *testing.T) {
	const n, k = 10, 4
	forged := func(chain []store.AuditEvent) store.AuditEvent {
		return store.AuditEvent{ID: k, TS: chain[k-1].TS, Username: "mallory", Action: "user.delete", PrevHash: chain[k-2].Hash}
	}
	tests := []struct {
		desc   string
		tamper func(t *testing.T, db *store.DB, chain []store.AuditEvent)
		want   store.AuditVerify
	}{
		{"untouched", func(*testing.T, *store.DB, []store.AuditEvent) {}, store.AuditVerify{OK: true, Checked: n}},
		{"edit a field", func(t *testing.T, db *store.DB, _ []store.AuditEvent) {
			mustExec(t, db, `UPDATE audit_events SET detail = 'nothing happened' WHERE id = $1`, k)
		}, store.AuditVerify{BrokenAt: k, Checked: k}},
		{"fill a v2 field of a v1 record", func(t *testing.T, db *store.DB, _ []store.AuditEvent) {
			mustExec(t, db, `UPDATE audit_events SET result = 'denied' WHERE id = $1`, k-1)
		}, store.AuditVerify{BrokenAt: k - 1, Checked: k - 1}},
		{"edit a field and recompute its hash", func(t *testing.T, db *store.DB, chain []store.AuditEvent) {
			e := chain[k-1]
			e.Username = "mallory"
			put(t, db, k, withHash(e, store.AuditHash(e)))
		}, store.AuditVerify{BrokenAt: k + 1, Checked: k + 1}},
		{"delete a row", func(t *testing.T, db *store.DB, _ []store.AuditEvent) {
			mustExec(t, db, `DELETE FROM audit_events WHERE id = $1`, k)
		}, store.AuditVerify{BrokenAt: k, Checked: k}},
		{"swap two rows' contents", func(t *testing.T, db *store.DB, chain []store.AuditEvent) {
			put(t, db, k, chain[6])
			put(t, db, 7, chain[k-1])
		}, store.AuditVerify{BrokenAt: k, Checked: k}},
		{"reorder two rows by id", func(t *testing.T, db *store.DB, _ []store.AuditEvent) {
			mustExec(t, db, `UPDATE audit_events SET id = -1 WHERE id = $1`, k)
			mustExec(t, db, `UPDATE audit_events SET id = $1 WHERE id = 7`, k)
			mustExec(t, db, `UPDATE audit_events SET id = 7 WHERE id = -1`)
		}, store.AuditVerify{BrokenAt: k, Checked: k}},
		{"insert a forged row with a wrong hash", func(t *testing.T, db *store.DB, chain []store.AuditEvent) {
			shiftFrom(t, db, k)
			insert(t, db, withHash(forged(chain), strings.Repeat("f", 64)))
		}, store.AuditVerify{BrokenAt: k, Checked: k}},
		{"insert a forged row with a recomputed hash", func(t *testing.T, db *store.DB, chain []store.AuditEvent) {
			// The forged row links correctly to its predecessor; the
			// first record that cannot be right is the one after it.
			shiftFrom(t, db, k)
			insert(t, db, withHash(forged(chain), store.AuditHash(forged(chain))))
		}, store.AuditVerify{BrokenAt: k + 1, Checked: k + 1}},
		{"truncate the tail", func(t *testing.T, db *store.DB, _ []store.AuditEvent) {
			mustExec(t, db, `DELETE FROM audit_events WHERE id > $1`, n-3)
		}, store.AuditVerify{BrokenAt: n - 2, Checked: n - 3}},
		{"truncate the tail, then append", func(t *testing.T, db *store.DB, _ []store.AuditEvent) {
			mustExec(t, db, `DELETE FROM audit_events WHERE id > $1`, n-3)
			appendN(t, db, 1) // must not heal the chain over the gap
		}, store.AuditVerify{BrokenAt: n - 2, Checked: n - 2}},
		{"rewrite the last row with a recomputed hash", func(t *testing.T, db *store.DB, chain []store.AuditEvent) {
			e := chain[n-1]
			e.Detail = "harmless"
			put(t, db, n, withHash(e, store.AuditHash(e)))
		}, store.AuditVerify{BrokenAt: n, Checked: n}},
		{"append a row outside the chain", func(t *testing.T, db *store.DB, chain []store.AuditEvent) {
			e := store.AuditEvent{ID: n + 1, TS: 1, Action: "user.create", PrevHash: chain[n-1].Hash}
			insert(t, db, withHash(e, store.AuditHash(e)))
		}, store.AuditVerify{BrokenAt: n + 1, Checked: n + 1}},
		{"delete every row", func(t *testing.T, db *store.DB, _ []store.AuditEvent) {
			mustExec(t, db, `DELETE FROM audit_events`)
		}, store.AuditVerify{BrokenAt: 1, Checked: 0}},
		{"delete the head", func(t *testing.T, db *store.DB, _ []store.AuditEvent) {
			mustExec(t, db, `DELETE FROM settings WHERE key = 'audit.head'`)
		}, store.AuditVerify{BrokenAt: 1, Checked: n}},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			storetest.Each(t, func(t *testing.T, db *store.DB) {
				chain := appendN(t, db, n)
				tt.tamper(t, db, chain)
				if diff := cmp.Diff(verify(t, db), tt.want); diff != "" {
					t.Errorf("VerifyAudit (-got, +want):\n%s", diff)
				}
			})
		})
	}
}

func TestAuditEmptyChainVerifies(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		if diff := cmp.Diff(verify(t, db), store.AuditVerify{OK: true}); diff != "" {
			t.Errorf("VerifyAudit (-got, +want):\n%s", diff)
		}
	})
}

// TestAuditConcurrentAppend: appends from many goroutines get distinct,
// contiguous ids and form one valid chain.
func TestAuditConcurrentAppend(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		const writers = 50
		ids := make([]int64, writers)
		errs := make([]error, writers)
		var wg sync.WaitGroup
		for i := range writers {
			wg.Go(func() {
				e, err := db.AppendAudit(t.Context(), store.AuditEvent{Username: fmt.Sprintf("u%d", i), Action: "test.concurrent"})
				ids[i], errs[i] = e.ID, err
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
		slices.Sort(ids)
		want := make([]int64, writers)
		for i := range want {
			want[i] = int64(i + 1)
		}
		if diff := cmp.Diff(ids, want); diff != "" {
			t.Errorf("ids (-got, +want):\n%s", diff)
		}
		if diff := cmp.Diff(verify(t, db), store.AuditVerify{OK: true, Checked: writers}); diff != "" {
			t.Errorf("VerifyAudit (-got, +want):\n%s", diff)
		}
	})
}

// TestAuditAppendFields: the append fills the chain fields, keeps v1 and
// v2 records as given, makes text storable, and the list returns exactly
// what the append returned.
func TestAuditAppendFields(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		inputs := []store.AuditEvent{
			{TS: 1700000000, Username: "admin", Role: "admin", Action: "login", IP: "192.0.2.1"},
			{Username: "bob", Action: "user.update", Target: "users/2", ActorType: "token", RequestID: "r-1",
				UserAgent: "curl/8", Result: "ok", BeforeJSON: `{"role":"viewer"}`, AfterJSON: `{"role":"admin"}`},
			{Username: "x\x00y", Action: "login.failed", UserAgent: "bad\xffutf8\x00", Result: "denied"},
		}
		var got []store.AuditEvent
		for _, in := range inputs {
			e, err := db.AppendAudit(t.Context(), in)
			if err != nil {
				t.Fatalf("AppendAudit: %v", err)
			}
			got = append(got, e)
		}
		if got[0].TS != 1700000000 || got[1].TS == 0 {
			t.Errorf("TS = %d, %d; want the given one kept and a zero one set to now", got[0].TS, got[1].TS)
		}
		if got[0].PrevHash != store.AuditGenesis || got[1].PrevHash != got[0].Hash || got[2].PrevHash != got[1].Hash {
			t.Error("records are not linked by prev_hash")
		}
		for _, e := range got {
			if e.Hash != store.AuditHash(e) {
				t.Errorf("record %d: Hash is not AuditHash of the record", e.ID)
			}
		}
		if got[2].Username != "x\uFFFDy" || got[2].UserAgent != "bad\uFFFDutf8\uFFFD" {
			t.Errorf("cleaned text = %q, %q", got[2].Username, got[2].UserAgent)
		}
		listed, err := db.ListAudit(t.Context(), store.AuditFilter{})
		if err != nil {
			t.Fatal(err)
		}
		slices.Reverse(listed)
		if diff := cmp.Diff(listed, got); diff != "" {
			t.Errorf("ListAudit (-got, +want):\n%s", diff)
		}
		if diff := cmp.Diff(verify(t, db), store.AuditVerify{OK: true, Checked: 3}); diff != "" {
			t.Errorf("VerifyAudit (-got, +want):\n%s", diff)
		}
	})
}

// TestAuditRolledBackWithChange: an append whose transaction rolls back
// leaves no trace, and the next append reuses its id.
func TestAuditRolledBackWithChange(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		appendN(t, db, 2)
		abort := errors.New("change refused")
		err := db.InTx(t.Context(), func(tx *store.Tx) error {
			if _, err := tx.AppendAudit(t.Context(), store.AuditEvent{Action: "user.delete"}); err != nil {
				return err
			}
			return abort
		})
		if !errors.Is(err, abort) {
			t.Fatalf("InTx = %v, want %v", err, abort)
		}
		if e := appendN(t, db, 1)[0]; e.ID != 3 {
			t.Errorf("next append got id %d, want 3", e.ID)
		}
		if diff := cmp.Diff(verify(t, db), store.AuditVerify{OK: true, Checked: 3}); diff != "" {
			t.Errorf("VerifyAudit (-got, +want):\n%s", diff)
		}
	})
}

// TestAuditFailClosed is RELIABILITY case 17: when the audit record cannot
// be written, the change made in the same transaction is not kept; reads
// go on.
func TestAuditFailClosed(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		appendN(t, db, 1)
		if db.Dialect() == store.SQLite {
			mustExec(t, db, `CREATE TRIGGER audit_down BEFORE INSERT ON audit_events BEGIN SELECT RAISE(ABORT, 'audit down'); END`)
		} else {
			mustExec(t, db, `CREATE FUNCTION audit_down() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'audit down'; END $$`)
			mustExec(t, db, `CREATE TRIGGER audit_down BEFORE INSERT ON audit_events FOR EACH ROW EXECUTE FUNCTION audit_down()`)
		}
		err := db.InTx(t.Context(), func(tx *store.Tx) error {
			if _, err := tx.SQL().ExecContext(t.Context(), `INSERT INTO settings (key, value, updated_at) VALUES ('privileged', 'changed', 0)`); err != nil {
				return err
			}
			_, err := tx.AppendAudit(t.Context(), store.AuditEvent{Action: "user.create"})
			return err
		})
		if err == nil || !strings.Contains(err.Error(), "audit down") {
			t.Fatalf("InTx error = %v, want the audit failure", err)
		}
		if _, err := db.GetSetting(t.Context(), "privileged"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("privileged change after failed audit: GetSetting error = %v, want ErrNotFound", err)
		}
		if _, err := db.AppendAudit(t.Context(), store.AuditEvent{Action: "login"}); err == nil {
			t.Error("AppendAudit succeeded while the audit table refuses inserts")
		}
		// Reads go on.
		if list, err := db.ListAudit(t.Context(), store.AuditFilter{}); err != nil || len(list) != 1 {
			t.Errorf("ListAudit while audit is down = %d records, %v; want 1", len(list), err)
		}
		if diff := cmp.Diff(verify(t, db), store.AuditVerify{OK: true, Checked: 1}); diff != "" {
			t.Errorf("VerifyAudit (-got, +want):\n%s", diff)
		}
	})
}

func TestListAudit(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		seed := []store.AuditEvent{
			{TS: 1000, Username: "alice", Action: "login", IP: "10.0.0.1", Result: "ok"},
			{TS: 2000, Username: "bob", Action: "user.create", Target: "users/7", IP: "10.0.0.2", Result: "ok"},
			{TS: 3000, Username: "alice", Action: "ai.provider.update", Target: "AI_Providers/1", IP: "10.0.0.1", Result: "error"},
			{TS: 4000, Username: "alice", Action: "ai.analyze", Target: "devices/42", IP: "10.0.0.4", Result: "denied"},
			{TS: 5000, Username: "carol", Action: "login.failed", Target: "a%b_c", IP: "10.0.0.3", Result: "denied"},
			{TS: 6000, Username: "dave", Action: "ai_provider.update", IP: "10.0.0.5", Result: "ok"},
			{TS: 7000, Username: "dave", Action: "aiXprovider.update", IP: "10.0.0.5", Result: "ok"},
			{TS: 8000, Username: "eve", Action: "LOGIN.weird", IP: "10.0.0.6", Result: "ok"},
		}
		for _, e := range seed {
			if _, err := db.AppendAudit(t.Context(), e); err != nil {
				t.Fatal(err)
			}
		}
		tests := []struct {
			desc string
			f    store.AuditFilter
			want []int64
		}{
			{"no filter, newest first", store.AuditFilter{}, []int64{8, 7, 6, 5, 4, 3, 2, 1}},
			{"limit", store.AuditFilter{Limit: 2}, []int64{8, 7}},
			{"actor", store.AuditFilter{Actor: "alice"}, []int64{4, 3, 1}},
			{"action exact", store.AuditFilter{Action: "login"}, []int64{1}},
			{"action prefix is case-sensitive", store.AuditFilter{Action: "login*"}, []int64{5, 1}},
			{"action prefix with dots", store.AuditFilter{Action: "ai.provider.*"}, []int64{3}},
			{"action prefix: _ is literal", store.AuditFilter{Action: "ai_provider.*"}, []int64{6}},
			{"action prefix: . is literal", store.AuditFilter{Action: "ai.*"}, []int64{4, 3}},
			{"action *", store.AuditFilter{Action: "*"}, []int64{8, 7, 6, 5, 4, 3, 2, 1}},
			{"action without wildcard is not a prefix", store.AuditFilter{Action: "ai"}, []int64{}},
			{"target substring", store.AuditFilter{Target: "users/"}, []int64{2}},
			{"target ignores case", store.AuditFilter{Target: "ai_providers"}, []int64{3}},
			{"target: _ is literal", store.AuditFilter{Target: "b_c"}, []int64{5}},
			{"target: % is literal", store.AuditFilter{Target: "%"}, []int64{5}},
			{"ip", store.AuditFilter{IP: "10.0.0.1"}, []int64{3, 1}},
			{"result", store.AuditFilter{Result: "denied"}, []int64{5, 4}},
			{"date range inclusive", store.AuditFilter{From: 2000, To: 4000}, []int64{4, 3, 2}},
			{"from only", store.AuditFilter{From: 7000}, []int64{8, 7}},
			{"to only", store.AuditFilter{To: 1000}, []int64{1}},
			{"filters combine", store.AuditFilter{Actor: "alice", Result: "denied"}, []int64{4}},
			{"no match", store.AuditFilter{Actor: "nobody"}, []int64{}},
		}
		for _, tt := range tests {
			t.Run(tt.desc, func(t *testing.T) {
				list, err := db.ListAudit(t.Context(), tt.f)
				if err != nil {
					t.Fatalf("ListAudit: %v", err)
				}
				if list == nil {
					t.Fatal("ListAudit returned a nil slice")
				}
				got := []int64{}
				for _, e := range list {
					got = append(got, e.ID)
				}
				if diff := cmp.Diff(got, tt.want); diff != "" {
					t.Errorf("ids (-got, +want):\n%s", diff)
				}
			})
		}
	})
}
