package auth

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"netmon/app/audit"
	"netmon/app/secret"
	"netmon/store"
	"netmon/store/storetest"
)

func newTestService(t testing.TB, db *store.DB, cfg Config) *Service {
	t.Helper()
	s, err := New(slog.New(slog.DiscardHandler), cfg, db, audit.Builder{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSessionStoresExpireAndSweep(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		for _, kind := range []string{"memory", "db"} {
			t.Run(kind, func(t *testing.T) {
				cfg := DefaultConfig()
				cfg.SessionStore = kind
				cfg.Password = "bootstrap-pw-1"
				s := newTestService(t, db, cfg)
				ctx := context.Background()
				tok, err := s.NewSession(ctx, Identity{Username: "admin", Role: RoleAdmin, Actor: ActorLegacy})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := s.Authenticate(ctx, Credentials{Token: tok}); err != nil {
					t.Fatalf("fresh session: %v", err)
				}
				// A week and a second later the session is refused and swept.
				s.now = func() time.Time { return time.Now().Add(SessionMaxAge*time.Second + time.Second) }
				if _, err := s.Authenticate(ctx, Credentials{Token: tok}); err != ErrUnauthenticated {
					t.Fatalf("expired session: %v", err)
				}
				tok2, _ := s.NewSession(ctx, Identity{Username: "admin", Role: RoleAdmin, Actor: ActorLegacy})
				s.now = func() time.Time { return time.Now().Add(3 * SessionMaxAge * time.Second) }
				n, err := s.sessions.Sweep(ctx, s.now().Unix())
				if err != nil || n != 1 {
					t.Fatalf("sweep removed %d (%v), want 1", n, err)
				}
				if _, err := s.sessions.Get(ctx, secret.Hash(tok2)); err == nil {
					t.Fatal("swept session still there")
				}
			})
		}
	})
}

// TestLoginTimingDoesNotRevealUsers compares the time of a login for an
// unknown user with a wrong password for a known one (RELIABILITY 25):
// both run one bcrypt comparison.
func TestLoginTimingDoesNotRevealUsers(t *testing.T) {
	db := storetest.OpenSQLite(t)
	s := newTestService(t, db, DefaultConfig())
	ctx := context.Background()
	hash, _ := HashPassword("known-user-pw")
	if err := db.InTx(ctx, func(tx *store.Tx) error {
		_, err := tx.CreateUser(ctx, store.User{Username: "known", PasswordHash: hash, Role: "viewer", Enabled: true})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	// Interleaved, and the fastest of each: on a loaded machine a slow
	// sample says how busy the cores were, not what the check costs.
	check := func(name string) time.Duration {
		start := time.Now()
		if _, err := s.checkCredentials(ctx, name, "wrong-password"); err != ErrBadCredentials {
			t.Fatalf("%s: %v", name, err)
		}
		return time.Since(start)
	}
	known, unknown := time.Hour, time.Hour
	for range 9 {
		known = min(known, check("known"))
		unknown = min(unknown, check("nobody"))
	}
	ratio := float64(unknown) / float64(known)
	if ratio < 0.5 || ratio > 2 {
		t.Fatalf("unknown user %v vs known user %v: the timing tells them apart", unknown, known)
	}
	if known < 5*time.Millisecond {
		t.Fatalf("a password check took %v: is bcrypt really running?", known)
	}
}

// BenchmarkLogin is a successful username+password login: throttle,
// user lookup, bcrypt at BcryptCost, session creation and audit record.
func BenchmarkLogin(b *testing.B) {
	db := storetest.OpenSQLite(b)
	s := newTestService(b, db, DefaultConfig())
	ctx := context.Background()
	hash, _ := HashPassword("bench-password")
	if err := db.InTx(ctx, func(tx *store.Tx) error {
		_, err := tx.CreateUser(ctx, store.User{Username: "bench", PasswordHash: hash, Role: "admin", Enabled: true})
		return err
	}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	var n atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			if _, _, err := s.Login(ctx, LoginRequest{Username: "bench", Password: "bench-password"}, fmt.Sprint("10.0.0.", i%250), ""); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "logins/s")
}
