package enroll

import (
	"context"
	"log/slog"
	"net/netip"
	"testing"
	"time"

	"netmon/agentmode/wire"
	"netmon/app/audit"
	"netmon/app/errs"
	"netmon/store"
	"netmon/store/storetest"
)

// limiter records the enrollment throttle's verdicts: done(true) or
// done(false) per attempt; blocked refuses every attempt.
type limiter struct {
	blocked  bool
	outcomes []bool
}

func (l *limiter) Admit(string) (func(bool), bool) {
	if l.blocked {
		return nil, false
	}
	return func(ok bool) { l.outcomes = append(l.outcomes, ok) }, true
}

// roster records the enrollments the intake is told of.
type roster struct{ enrolled []store.Agent }

func (r *roster) Enrolled(a store.Agent, _ int64) { r.enrolled = append(r.enrolled, a) }

func newService(db *store.DB, cfg Config, l Limiter, r Roster) *Service {
	return New(slog.New(slog.DiscardHandler), cfg, db, audit.Builder{}, l, nil, r)
}

// TestHello: each refusal is its errs kind and counts against the address
// in the throttle when it is a guess at the secret; an enrollment tells
// the roster.
func TestHello(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		admin := store.AuditActor{Username: "admin", Role: "admin", ActorType: "user"}
		ip := netip.MustParseAddr("192.0.2.7")
		s := newService(db, Config{StaticToken: "static-secret", Interval: 30 * time.Second}, nil, nil)
		one := 1
		single, err := s.CreateEnrollToken(ctx, admin, "", EnrollTokenCreate{Name: "single", MaxUses: &one})
		if err != nil {
			t.Fatal(err)
		}
		narrow, err := s.CreateEnrollToken(ctx, admin, "", EnrollTokenCreate{Name: "narrow", AllowedCIDRs: []string{"10.0.0.0/8"}})
		if err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			desc     string
			secret   string
			hello    wire.Hello
			blocked  bool
			early    bool      // refused before the throttle is asked
			wantKind errs.Kind // Internal: accepted
			wantFail bool      // counted as a failure by the throttle
		}{
			{desc: "static secret", secret: "static-secret", hello: wire.Hello{Name: "a", MachineID: "m1"}},
			{desc: "no secret", wantKind: errs.Unauthorized, wantFail: true},
			{desc: "wrong static secret", secret: "static-secreT", wantKind: errs.Unauthorized, wantFail: true},
			{desc: "unknown ent_ token", secret: EnrollTokenPrefix + "00", wantKind: errs.Unauthorized, wantFail: true},
			{desc: "single-use token", secret: single.Token, hello: wire.Hello{Name: "b", MachineID: "m2"}},
			{desc: "single-use token again", secret: single.Token, hello: wire.Hello{MachineID: "m3"}, wantKind: errs.Conflict, wantFail: true},
			{desc: "token from outside its prefixes", secret: narrow.Token, wantKind: errs.Forbidden, wantFail: true},
			{desc: "over-long name", secret: "static-secret", hello: wire.Hello{Name: string(make([]byte, 129))}, early: true, wantKind: errs.Invalid},
			{desc: "blocked address", secret: "static-secret", blocked: true, wantKind: errs.Throttled},
		}
		for _, tt := range tests {
			l, r := &limiter{blocked: tt.blocked}, &roster{}
			s := newService(db, Config{StaticToken: "static-secret", Interval: 30 * time.Second}, l, r)
			resp, err := s.Hello(ctx, tt.secret, ip, tt.hello)
			if got := errs.KindOf(err); got != tt.wantKind || (err != nil) != (tt.wantKind != errs.Internal) {
				t.Errorf("%s: Hello error %v (kind %v), want kind %v", tt.desc, err, got, tt.wantKind)
				continue
			}
			if err == nil {
				if !resp.Accepted || resp.TelemetryIntervalSeconds != 30 || len(r.enrolled) != 1 || r.enrolled[0].ID != resp.AgentID {
					t.Errorf("%s: response %+v, roster told %+v", tt.desc, resp, r.enrolled)
				}
			}
			if tt.blocked || tt.early {
				if len(l.outcomes) != 0 {
					t.Errorf("%s: throttle outcomes %v, want none", tt.desc, l.outcomes)
				}
				continue
			}
			if len(l.outcomes) != 1 || l.outcomes[0] == tt.wantFail {
				t.Errorf("%s: throttle outcomes %v, want one failure=%v", tt.desc, l.outcomes, tt.wantFail)
			}
		}
	})
}

// TestCreateEnrollTokenInvalid: each bad field is Invalid and names it.
func TestCreateEnrollTokenInvalid(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		s := newService(db, Config{MultiSite: true}, nil, nil)
		by := store.AuditActor{Username: "admin"}
		days, uses := 4000, -1
		tests := []struct {
			desc, field string
			req         EnrollTokenCreate
		}{
			{"empty name", "name", EnrollTokenCreate{Site: "x"}},
			{"no site with -multi-site", "site", EnrollTokenCreate{Name: "n"}},
			{"expiry out of range", "expires_in_days", EnrollTokenCreate{Name: "n", Site: "x", ExpiresInDays: &days}},
			{"negative uses", "max_uses", EnrollTokenCreate{Name: "n", Site: "x", MaxUses: &uses}},
			{"bad prefix", "allowed_cidrs", EnrollTokenCreate{Name: "n", Site: "x", AllowedCIDRs: []string{"10.0.0.0/33"}}},
		}
		for _, tt := range tests {
			_, err := s.CreateEnrollToken(context.Background(), by, "", tt.req)
			e, ok := errs.As(err)
			if !ok || e.Kind != errs.Invalid || e.Field != tt.field {
				t.Errorf("%s: error %v, want Invalid on %s", tt.desc, err, tt.field)
			}
		}
	})
}
