package hub

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"netmon/app/compliance"
	"netmon/app/config"
	"netmon/store/storetest"
)

// TestComplianceEndToEnd: with -compliance, syslog lines sent over UDP
// are chained; the status shows them; the evidence downloaded from the
// API while their hour is open holds them signed by nothing (issue 28:
// not "OK"), and once the hour is signed verifies whole offline with the
// status' public key (masked by -mask-pii, no raw address inside); a
// review is stored with its audit record. On both databases.
func TestComplianceEndToEnd(t *testing.T) {
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		port := freeUDPPort(t)
		clk := newComplianceClock()
		h, boot := bootstrapWith(t, dsn, clk.option(), func(c *config.HubConfig) {
			c.Syslog.Addr = udpAddr(port)
			c.Compliance.Enabled, c.Compliance.MaskPII = true, true
			c.Compliance.KeyFile = filepath.Join(t.TempDir(), "compliance.key")
			clk.use(c)
		})
		conn, err := net.Dial("udp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		for i := range 3 {
			fmt.Fprintf(conn, "<38>Nov 24 10:00:0%d fw sshd: Accepted password for alice from 198.51.100.%d port 22", i, 10+i)
		}
		var st compliance.Status
		deadline := time.Now().Add(10 * time.Second)
		for {
			boot.call("GET", "/api/v1/compliance/status", nil).must(t, 200).decode(t, &st)
			if st.Records == 3 || time.Now().After(deadline) {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if !st.Config.Enabled || st.Records != 3 || st.LastRecordTS == 0 || !st.Config.MaskPII || st.Config.KeyID == "" {
			t.Fatalf("status %+v", st)
		}
		pub, err := compliance.ParsePublicPEM([]byte(st.Config.PublicKey))
		if err != nil {
			t.Fatal(err)
		}
		day := clk.Now().UTC().Format(time.DateOnly)
		// The hour is open: the records are chained, nothing signs them yet.
		open := boot.call("GET", "/api/v1/compliance/evidence?from="+day+"&to="+day, nil).must(t, 200)
		if rep, err := compliance.Verify(strings.NewReader(open.body), compliance.VerifyOptions{Keys: []ed25519.PublicKey{pub}}); !errors.Is(err, compliance.ErrNothingSigned) || rep.Records != 3 {
			t.Fatalf("verify in the open hour: %v (%+v), want 3 records signed by nothing", err, rep)
		}
		// The hour ends: the hub signs it, and every record verifies.
		clk.closeHour()
		r := waitSigned(t, boot, day, pub, 3)
		if r.header.Get("Content-Type") != "application/json" || !strings.Contains(r.header.Get("Content-Disposition"), "netmon-evidence-"+day) {
			t.Fatalf("headers %v", r.header)
		}
		if strings.Contains(r.body, "198.51.100.") || strings.Contains(r.body, "alice") {
			t.Fatalf("masked bundle carries a raw address or user: %s", r.body)
		}
		boot.call("GET", "/api/v1/compliance/evidence?from=2026-13-01&to="+day, nil).must(t, 400)

		boot.call("POST", "/api/v1/compliance/reviews", map[string]string{"kind": "log", "period": "2026-10", "notes": "monthly", "finding": "none"}).must(t, 200)
		boot.call("POST", "/api/v1/compliance/reviews", map[string]string{"kind": "other", "period": "2026-10"}).must(t, 400)
		var reviews []struct {
			Kind, Period, Author string
		}
		boot.call("GET", "/api/v1/compliance/reviews", nil).must(t, 200).decode(t, &reviews)
		if len(reviews) != 1 || reviews[0].Kind != "log" || reviews[0].Period != "2026-10" || reviews[0].Author != "admin" {
			t.Fatalf("reviews %+v", reviews)
		}
		var rows []auditRow
		boot.call("GET", "/api/v1/audit?action=compliance.*", nil).must(t, 200).decode(t, &rows)
		// Two downloads (the open hour, then the signed one), one review.
		if len(rows) != 3 || rows[0].Action != "compliance.review" || rows[1].Action != "compliance.evidence" || rows[2].Action != "compliance.evidence" {
			t.Fatalf("audit %+v", rows)
		}
		_ = h
	})
}

// TestISMSRegisters: the three registers through the API, validated, each
// change audited with before and after. On both databases.
func TestISMSRegisters(t *testing.T) {
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		_, boot := bootstrap(t, dsn)
		asset := map[string]any{"ref": "AS-1", "asset": map[string]any{"name": "core firewall", "type": "hardware", "owner": "netops", "classification": "confidential"}}
		boot.call("POST", "/api/v1/isms/assets", asset).must(t, 200)
		boot.call("POST", "/api/v1/isms/assets", asset).must(t, 409)
		risk := map[string]any{"ref": "R-1", "risk": map[string]any{"title": "firewall misconfiguration", "assets": []string{"AS-1"},
			"likelihood": 3, "impact": 4, "treatment": "mitigate", "controls": []string{"A.8.9", "A.8.99"}, "status": "open"}}
		if r := boot.call("POST", "/api/v1/isms/risks", risk).must(t, 400); !strings.Contains(r.body, `A.8.99`) {
			t.Fatalf("bad control: %s", r.body)
		}
		risk["risk"].(map[string]any)["controls"] = []string{"A.8.9", "A.8.20"}
		var created struct {
			ID   int64 `json:"id"`
			Risk struct {
				Score int `json:"score"`
			} `json:"risk"`
		}
		boot.call("POST", "/api/v1/isms/risks", risk).must(t, 200).decode(t, &created)
		if created.Risk.Score != 12 {
			t.Fatalf("score %d, want 12", created.Risk.Score)
		}
		risk["risk"].(map[string]any)["status"] = "treated"
		boot.call("PUT", fmt.Sprintf("/api/v1/isms/risks/%d", created.ID), risk).must(t, 200)
		boot.call("PUT", "/api/v1/isms/risks/999", risk).must(t, 404)
		boot.call("POST", "/api/v1/isms/soa", map[string]any{"ref": "A.9.1", "soa": map[string]any{"applicable": true, "implemented": "yes"}}).must(t, 400)
		boot.call("POST", "/api/v1/isms/soa", map[string]any{"ref": "A.7.4", "soa": map[string]any{"applicable": false, "implemented": "no"}}).must(t, 400)
		boot.call("POST", "/api/v1/isms/soa", map[string]any{"ref": "A.7.4", "soa": map[string]any{"applicable": false, "justification": "no premises of our own", "implemented": "no"}}).must(t, 200)
		var controls []string
		boot.call("GET", "/api/v1/isms/soa/controls", nil).must(t, 200).decode(t, &controls)
		if len(controls) != 93 || controls[0] != "A.5.1" || controls[92] != "A.8.34" {
			t.Fatalf("controls %d %v", len(controls), controls)
		}
		var risks []struct {
			Ref  string `json:"ref"`
			Risk struct {
				Status string `json:"status"`
			} `json:"risk"`
		}
		boot.call("GET", "/api/v1/isms/risks", nil).must(t, 200).decode(t, &risks)
		if len(risks) != 1 || risks[0].Ref != "R-1" || risks[0].Risk.Status != "treated" {
			t.Fatalf("risks %+v", risks)
		}
		var rows []auditRow
		boot.call("GET", "/api/v1/audit?action=isms.*", nil).must(t, 200).decode(t, &rows)
		if len(rows) != 4 || rows[0].Action != "isms.create" || rows[1].Action != "isms.update" ||
			!strings.Contains(rows[1].BeforeJSON, `"status":"open"`) || !strings.Contains(rows[1].AfterJSON, `"status":"treated"`) {
			t.Fatalf("audit %+v", rows)
		}
	})
}

// complianceClock is the compliance log's clock in hub tests: three hours
// behind the system's (never ahead, which would raise time_drift), a
// minute into an hour when the test starts, and moved on an hour by
// closeHour; the writer (a 20 ms tick) then signs the hour that ended.
type complianceClock struct {
	base, start time.Time
	off         atomic.Int64
}

func newComplianceClock() *complianceClock {
	return &complianceClock{base: time.Now().Add(-3 * time.Hour).Truncate(time.Hour).Add(time.Minute), start: time.Now()}
}

func (c *complianceClock) Now() time.Time {
	return c.base.Add(time.Since(c.start) + time.Duration(c.off.Load()))
}

func (c *complianceClock) closeHour() { c.off.Add(int64(time.Hour)) }

// use makes the compliance log tick fast; option gives it the clock.
func (c *complianceClock) use(cfg *config.HubConfig) {
	cfg.Compliance.Tick = 20 * time.Millisecond
}

func (c *complianceClock) option() Option { return withComplianceClock(c.Now) }

// withComplianceClock sets the compliance log's clock.
func withComplianceClock(now func() time.Time) Option {
	return func(h *Hub) { h.complianceNow = now }
}

// waitSigned waits (10 s at most) for the hub to sign an hour covering
// its n records, then downloads the evidence of day once (each download
// is audited) and checks that every record verifies under a signature.
func waitSigned(t *testing.T, c *client, day string, pub ed25519.PublicKey, n uint64) response {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var st compliance.Status
		c.call("GET", "/api/v1/compliance/status", nil).must(t, 200).decode(t, &st)
		if st.LastHourly != nil && st.LastHourly.Last >= n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no hour signed after the clock passed its end: %+v", st)
		}
		time.Sleep(20 * time.Millisecond)
	}
	r := c.call("GET", "/api/v1/compliance/evidence?from="+day+"&to="+day, nil).must(t, 200)
	rep, err := compliance.Verify(strings.NewReader(r.body), compliance.VerifyOptions{Keys: []ed25519.PublicKey{pub}})
	if err != nil || rep.Records != n || rep.Signed != n || rep.Hourly == 0 {
		t.Fatalf("evidence of %s after its hour closed: %v (%+v), want %d records, all signed", day, err, rep, n)
	}
	return r
}
