package pki

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestBrowserWithoutCertificate(t *testing.T) {
	clock := newClock()
	a, _ := newAuthority(t, testConfig(t), clock)
	addr, hits := startServer(t, a)

	// A spoofed client-certificate header must not make an agent
	// (RELIABILITY case 20): identity comes from the TLS state only.
	spoof := http.Header{
		"X-Client-Cert":       {strings.ReplaceAll(a.CAPEM(), "\n", " ")},
		"X-Ssl-Client-Cn":     {"netmon-agent-1"},
		"X-Ssl-Client-Verify": {"SUCCESS"},
	}
	for _, minVersion := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
		cfg := clientConfig(a.caPool, nil, nil)
		cfg.MaxVersion = minVersion
		body, err := get(addr, cfg, spoof)
		if err != nil {
			t.Fatalf("request without certificate: %v", err)
		}
		if body != "0 false" {
			t.Errorf("AgentID = %q, want 0 false", body)
		}
	}
	if hits.Load() != 2 {
		t.Errorf("handler reached %d times, want 2", hits.Load())
	}

	// TLS 1.1 is refused.
	cfg := clientConfig(a.caPool, nil, nil)
	cfg.MinVersion, cfg.MaxVersion = tls.VersionTLS10, tls.VersionTLS11
	if _, err := get(addr, cfg, nil); err == nil {
		t.Error("TLS 1.1 accepted")
	}
}

func TestAgentCertificate(t *testing.T) {
	clock := newClock()
	a, _ := newAuthority(t, testConfig(t), clock)
	addr, _ := startServer(t, a)

	tests := []struct {
		desc  string
		csrCN string
		id    int64
		want  string
	}{
		{"plain", "netmon-agent-42", 42, "42 true"},
		{"CSR asks for another agent", "netmon-agent-999", 7, "7 true"},
		{"CSR asks for admin", "admin", 3, "3 true"},
		{"large id", "", 1 << 62, "4611686018427387904 true"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			key := newKey(t, "p256")
			certPEM, _, err := a.SignClient(newCSR(t, key, tt.csrCN), tt.id)
			if err != nil {
				t.Fatal(err)
			}
			leaf := parseCertPEM(t, certPEM)
			if leaf.Subject.CommonName != AgentCN(tt.id) {
				t.Errorf("CN = %q, want %q", leaf.Subject.CommonName, AgentCN(tt.id))
			}
			cert := tls.Certificate{Certificate: [][]byte{leaf.Raw}, PrivateKey: key}
			// The standard client path: it sends the certificate because
			// the server names the hub CA as acceptable.
			cfg := &tls.Config{RootCAs: a.caPool, Certificates: []tls.Certificate{cert}}
			for _, v := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
				cfg.MaxVersion = v
				body, err := get(addr, cfg, nil)
				if err != nil {
					t.Fatalf("request with agent certificate (version %x): %v", v, err)
				}
				if body != tt.want {
					t.Errorf("AgentID = %q, want %q", body, tt.want)
				}
			}
		})
	}
}

func TestRefusedClientCertificates(t *testing.T) {
	clock := newClock()
	a, _ := newAuthority(t, testConfig(t), clock)
	addr, hits := startServer(t, a)
	hub := testCA{a.ca, a.caKey}
	other := newTestCA(t, caCommonName) // same name, other key

	clientEKU := []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	byHub := func(cn string, eku []x509.ExtKeyUsage) tls.Certificate {
		return hub.issue(t, &x509.Certificate{Subject: pkix.Name{CommonName: cn}, ExtKeyUsage: eku, KeyUsage: x509.KeyUsageDigitalSignature})
	}

	// Expired: signed while the clock stood 100 days back.
	clock.Set(time.Now().Add(-100 * 24 * time.Hour))
	expired := agentCert(t, a, 5)
	clock.Set(time.Now())

	tests := []struct {
		desc string
		cert tls.Certificate
	}{
		{"another CA", other.issue(t, &x509.Certificate{Subject: pkix.Name{CommonName: "netmon-agent-5"}, ExtKeyUsage: clientEKU})},
		{"expired", expired},
		{"hub CA, CN not an agent (CN/agent-id mismatch)", byHub("admin", clientEKU)},
		{"hub CA, agent 0", byHub("netmon-agent-0", clientEKU)},
		{"hub CA, signed id", byHub("netmon-agent-+5", clientEKU)},
		{"hub CA, leading zero", byHub("netmon-agent-05", clientEKU)},
		{"hub CA, id overflows", byHub("netmon-agent-99999999999999999999", clientEKU)},
		{"hub CA, server usage only", byHub("netmon-agent-5", []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth})},
		{"hub CA, no extended usage", byHub("netmon-agent-5", nil)},
		{"the hub's own server certificate", *a.server},
		{"self-signed", func() tls.Certificate {
			self := newTestCA(t, "netmon-agent-5")
			return tls.Certificate{Certificate: [][]byte{self.cert.Raw}, PrivateKey: self.key}
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			for _, v := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
				cfg := clientConfig(a.caPool, &tt.cert, nil)
				cfg.MaxVersion = v
				before := hits.Load()
				body, err := get(addr, cfg, nil)
				if err == nil {
					t.Errorf("version %x: request served (%q), want the handshake refused", v, body)
				}
				t.Logf("version %x: %v", v, err)
				if hits.Load() != before {
					t.Errorf("version %x: handler reached", v)
				}
			}
		})
	}
}

func TestVerifyAgentConnection(t *testing.T) {
	clock := newClock()
	a, _ := newAuthority(t, testConfig(t), clock)
	hub := testCA{a.ca, a.caKey}
	good := agentCert(t, a, 9).Leaf
	noEKU := hub.issue(t, &x509.Certificate{Subject: pkix.Name{CommonName: "netmon-agent-9"}}).Leaf
	admin := hub.issue(t, &x509.Certificate{Subject: pkix.Name{CommonName: "admin"}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}).Leaf
	verified := func(leaf *x509.Certificate) tls.ConnectionState {
		return tls.ConnectionState{PeerCertificates: []*x509.Certificate{leaf}, VerifiedChains: [][]*x509.Certificate{{leaf, a.ca}}}
	}
	tests := []struct {
		desc    string
		cs      tls.ConnectionState
		wantErr bool
	}{
		{"no certificate", tls.ConnectionState{}, false},
		{"verified agent", verified(good), false},
		{"verified, no extended usage", verified(noEKU), true},
		{"verified, CN admin", verified(admin), true},
		{"presented, not verified", tls.ConnectionState{PeerCertificates: []*x509.Certificate{good}}, true},
		{"empty chain", tls.ConnectionState{PeerCertificates: []*x509.Certificate{good}, VerifiedChains: [][]*x509.Certificate{{}}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			if err := verifyAgentConnection(tt.cs); (err != nil) != tt.wantErr {
				t.Errorf("verifyAgentConnection = %v, want error %v", err, tt.wantErr)
			}
		})
	}
}

func TestServerRenewal(t *testing.T) {
	clock := newClock()
	cfg := testConfig(t)
	a, logs := newAuthority(t, cfg, clock)
	addr, _ := startServer(t, a)
	client := clientConfig(a.caPool, nil, clock.Now)
	start := clock.Now()

	first := serverLeaf(t, addr, client)

	// Well inside the life: unchanged.
	clock.Set(start.Add(300 * 24 * time.Hour))
	if got := serverLeaf(t, addr, client); got.SerialNumber.Cmp(first.SerialNumber) != 0 {
		t.Fatal("re-issued 95 days before expiry")
	}

	for _, tt := range []struct {
		desc string
		at   time.Time
	}{
		{"29 days before expiry", first.NotAfter.Add(-29 * 24 * time.Hour)},
		{"after expiry", first.NotAfter.Add(400 * 24 * time.Hour)},
	} {
		t.Run(tt.desc, func(t *testing.T) {
			onDiskBefore, err := readCert(filepath.Join(cfg.Dir, serverCertFile))
			if err != nil {
				t.Fatal(err)
			}
			clock.Set(tt.at)
			got := serverLeaf(t, addr, client)
			if got.SerialNumber.Cmp(onDiskBefore.SerialNumber) == 0 {
				t.Fatal("server certificate not renewed")
			}
			if !got.NotAfter.After(onDiskBefore.NotAfter) {
				t.Errorf("NotAfter %v not later than %v", got.NotAfter, onDiskBefore.NotAfter)
			}
			checkDates(t, "renewed server", got, tt.at, cfg.ServerLife)
			onDisk, err := readCert(filepath.Join(cfg.Dir, serverCertFile))
			if err != nil {
				t.Fatal(err)
			}
			if !onDisk.Equal(got) {
				t.Error("server.crt on disk is not the served certificate")
			}
			if _, err := loadPair(filepath.Join(cfg.Dir, serverCertFile), filepath.Join(cfg.Dir, serverKeyFile)); err != nil {
				t.Errorf("pair on disk: %v", err)
			}
			// The next handshake keeps it.
			if again := serverLeaf(t, addr, client); !again.Equal(got) {
				t.Error("re-issued again on the next handshake")
			}
		})
	}
	if n := strings.Count(logs.String(), "server certificate issued"); n != 3 {
		t.Errorf("%d issue events, want 3:\n%s", n, logs.String())
	}
}

func TestServerRenewalNotBeyondCA(t *testing.T) {
	clock := newClock()
	cfg := testConfig(t)
	cfg.CALife = 60 * 24 * time.Hour // server life cut to the CA's
	a, _ := newAuthority(t, cfg, clock)
	if !a.server.Leaf.NotAfter.Equal(a.ca.NotAfter) {
		t.Fatalf("server NotAfter %v, want the CA's %v", a.server.Leaf.NotAfter, a.ca.NotAfter)
	}
	// Inside the last 30 days of the CA a new certificate could not last
	// longer, so none is issued on each handshake.
	clock.Set(a.ca.NotAfter.Add(-10 * 24 * time.Hour))
	serial := a.server.Leaf.SerialNumber
	addr, _ := startServer(t, a)
	serverLeaf(t, addr, clientConfig(a.caPool, nil, clock.Now))
	if a.server.Leaf.SerialNumber.Cmp(serial) != 0 {
		t.Error("re-issued a certificate that cannot outlive the CA")
	}
}

func TestOperatorCertificate(t *testing.T) {
	clock := newClock()
	op := newTestCA(t, "operator CA")
	opDir := t.TempDir()
	certPath, keyPath := filepath.Join(opDir, "hub.crt"), filepath.Join(opDir, "hub.key")
	serverTmpl := func() *x509.Certificate {
		return &x509.Certificate{
			Subject:     pkix.Name{CommonName: "hub.example.com"},
			DNSNames:    []string{"localhost"},
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
			KeyUsage:    x509.KeyUsageDigitalSignature,
		}
	}
	// touch moves both mtimes forward, as a renewal tool would.
	mtime := time.Now()
	touch := func() {
		mtime = mtime.Add(time.Second)
		os.Chtimes(certPath, mtime, mtime)
		os.Chtimes(keyPath, mtime, mtime)
	}
	first := op.issue(t, serverTmpl())
	writePair(t, first, certPath, keyPath)

	cfg := testConfig(t)
	cfg.CertFile, cfg.KeyFile = certPath, keyPath
	a, _ := newAuthority(t, cfg, clock)
	addr, _ := startServer(t, a)
	client := clientConfig(op.pool(), nil, nil)
	client.ServerName = "localhost"

	if got := serverLeaf(t, addr, client); !got.Equal(first.Leaf) {
		t.Fatal("operator certificate not served")
	}
	if _, err := os.Stat(filepath.Join(cfg.Dir, serverCertFile)); !os.IsNotExist(err) {
		t.Error("server.crt generated although an operator certificate is set")
	}
	// Agents still get certificates from the hub CA and connect.
	agent := agentCert(t, a, 11)
	agentClient := clientConfig(op.pool(), &agent, nil)
	agentClient.ServerName = "localhost"
	body, err := get(addr, agentClient, nil)
	if err != nil || body != "11 true" {
		t.Errorf("agent with operator server certificate: %q, %v", body, err)
	}

	second := op.issue(t, serverTmpl())
	writePair(t, second, certPath, keyPath)
	touch()
	if got := serverLeaf(t, addr, client); !got.Equal(second.Leaf) {
		t.Fatal("replaced operator certificate not picked up")
	}

	// A half-replaced pair (new certificate, old key) keeps the previous
	// one in service.
	third := op.issue(t, serverTmpl())
	writePair(t, tls.Certificate{Certificate: third.Certificate, PrivateKey: second.PrivateKey}, certPath, keyPath)
	touch()
	if got := serverLeaf(t, addr, client); !got.Equal(second.Leaf) {
		t.Fatal("mismatched pair not refused at reload")
	}
	writePair(t, third, certPath, keyPath)
	touch()
	if got := serverLeaf(t, addr, client); !got.Equal(third.Leaf) {
		t.Fatal("fixed pair not picked up")
	}

	// At New, a mismatched pair is an error.
	writePair(t, tls.Certificate{Certificate: first.Certificate, PrivateKey: third.PrivateKey}, certPath, keyPath)
	if _, err := New(nil, cfg, Deps{Now: clock.Now}); err == nil || !strings.Contains(err.Error(), "load operator certificate") {
		t.Errorf("New with a mismatched operator pair = %v, want an error", err)
	}
	os.Remove(keyPath)
	if _, err := New(nil, cfg, Deps{Now: clock.Now}); err == nil {
		t.Error("New with a missing operator key succeeded")
	}
}

func TestServerRenewalFailureKeepsServing(t *testing.T) {
	clock := newClock()
	cfg := testConfig(t)
	a, logs := newAuthority(t, cfg, clock)
	addr, _ := startServer(t, a)
	client := clientConfig(a.caPool, nil, clock.Now)
	first := serverLeaf(t, addr, client)

	// The dir becomes unwritable (a file where it was): renewal fails, the
	// still-valid certificate is served, and the failure is retried once
	// a minute rather than on every handshake.
	saved := cfg.Dir + ".saved"
	if err := os.Rename(cfg.Dir, saved); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg.Dir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	clock.Set(first.NotAfter.Add(-10 * 24 * time.Hour))
	for range 3 {
		if got := serverLeaf(t, addr, client); !got.Equal(first) {
			t.Fatal("served another certificate although renewal failed")
		}
	}
	if n := strings.Count(logs.String(), "server certificate renewal failed"); n != 1 {
		t.Errorf("%d failure logs, want 1:\n%s", n, logs.String())
	}

	os.Remove(cfg.Dir)
	if err := os.Rename(saved, cfg.Dir); err != nil {
		t.Fatal(err)
	}
	clock.Set(clock.Now().Add(2 * time.Minute))
	if got := serverLeaf(t, addr, client); got.Equal(first) {
		t.Error("not renewed once the dir is back")
	}
}
