package pki

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestSignClient(t *testing.T) {
	clock := newClock()
	a, logs := newAuthority(t, testConfig(t), clock)
	for _, kind := range []string{"p256", "p384", "rsa2048", "ed25519"} {
		t.Run(kind, func(t *testing.T) {
			key := newKey(t, kind)
			certPEM, notAfter, err := a.SignClient(newCSR(t, key, "admin"), 17)
			if err != nil {
				t.Fatalf("SignClient: %v", err)
			}
			c := parseCertPEM(t, certPEM)
			if c.Subject.String() != "CN=netmon-agent-17" {
				t.Errorf("subject = %q, want CN=netmon-agent-17 only", c.Subject)
			}
			if len(c.DNSNames)+len(c.IPAddresses)+len(c.EmailAddresses)+len(c.URIs) != 0 {
				t.Errorf("SANs copied from the CSR: %v %v", c.DNSNames, c.IPAddresses)
			}
			if !slices.Equal(c.ExtKeyUsage, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}) {
				t.Errorf("EKU = %v, want [ClientAuth]", c.ExtKeyUsage)
			}
			if c.KeyUsage != x509.KeyUsageDigitalSignature || c.IsCA {
				t.Errorf("key usage %v IsCA %v", c.KeyUsage, c.IsCA)
			}
			if !samePublicKey(c.PublicKey, key.Public()) {
				t.Error("certificate is not for the CSR's key")
			}
			if c.SerialNumber.Sign() <= 0 || c.SerialNumber.BitLen() > 128 || c.SerialNumber.BitLen() < 64 {
				t.Errorf("serial %x is not a random 128-bit number", c.SerialNumber)
			}
			if !notAfter.Equal(c.NotAfter) {
				t.Errorf("returned notAfter %v, certificate %v", notAfter, c.NotAfter)
			}
			checkDates(t, "client", c, clock.Now(), 90*24*time.Hour)
			if _, err := c.Verify(x509.VerifyOptions{Roots: a.caPool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
				t.Errorf("does not verify as a client certificate: %v", err)
			}
			if _, err := c.Verify(x509.VerifyOptions{Roots: a.caPool}); err == nil {
				t.Error("verifies as a server certificate")
			}
		})
	}
	if strings.Contains(logs.String(), "PRIVATE KEY") {
		t.Error("log contains a private key")
	}
}

func TestSignClientSerialsDiffer(t *testing.T) {
	a, _ := newAuthority(t, testConfig(t), newClock())
	csr := newCSR(t, newKey(t, "p256"), "")
	x, _, err1 := a.SignClient(csr, 1)
	y, _, err2 := a.SignClient(csr, 1)
	if err := errors.Join(err1, err2); err != nil {
		t.Fatal(err)
	}
	if parseCertPEM(t, x).SerialNumber.Cmp(parseCertPEM(t, y).SerialNumber) == 0 {
		t.Error("two certificates with the same serial")
	}
}

func TestSignClientNotBeyondCA(t *testing.T) {
	clock := newClock()
	cfg := testConfig(t)
	cfg.CALife = 30 * 24 * time.Hour
	a, _ := newAuthority(t, cfg, clock)
	_, notAfter, err := a.SignClient(newCSR(t, newKey(t, "p256"), ""), 1)
	if err != nil {
		t.Fatal(err)
	}
	if !notAfter.Equal(a.ca.NotAfter) {
		t.Errorf("notAfter %v, want the CA's %v", notAfter, a.ca.NotAfter)
	}
	clock.Set(a.ca.NotAfter.Add(time.Hour))
	if _, _, err := a.SignClient(newCSR(t, newKey(t, "p256"), ""), 1); err == nil || !strings.Contains(err.Error(), "CA expired") {
		t.Errorf("SignClient after CA expiry = %v, want an error", err)
	}
}

func TestSignClientRefuses(t *testing.T) {
	a, _ := newAuthority(t, testConfig(t), newClock())
	good := newCSR(t, newKey(t, "p256"), "")

	// A valid request whose signature no longer matches its content.
	b, _ := pem.Decode([]byte(good))
	tampered := slices.Clone(b.Bytes)
	tampered[len(tampered)-5] ^= 0xff // inside the signature
	badSig := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: tampered}))

	// A certificate is not a request.
	certPEM, _, err := a.SignClient(good, 1)
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		desc    string
		csr     string
		id      int64
		wantCSR bool // wraps ErrInvalidCSR
		wantErr string
	}{
		{"empty", "", 1, true, "no PEM"},
		{"garbage", "hello, hub", 1, true, "no PEM"},
		{"certificate instead of request", certPEM, 1, true, "no PEM CERTIFICATE REQUEST"},
		{"garbage DER", "-----BEGIN CERTIFICATE REQUEST-----\nZ2FyYmFnZQ==\n-----END CERTIFICATE REQUEST-----\n", 1, true, "invalid certificate request"},
		{"bad signature", badSig, 1, true, "signature"},
		{"RSA 1024", newCSR(t, newKey(t, "rsa1024"), ""), 1, true, "RSA key of 1024 bits"},
		{"P-521", newCSR(t, newKey(t, "p521"), ""), 1, true, "curve P-521"},
		{"too large", strings.Repeat("A", maxCSRBytes+1), 1, true, "more than"},
		{"agent id 0", good, 0, false, "not positive"},
		{"negative agent id", good, -3, false, "not positive"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			got, _, err := a.SignClient(tt.csr, tt.id)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("SignClient = %v, want an error containing %q", err, tt.wantErr)
			}
			if errors.Is(err, ErrInvalidCSR) != tt.wantCSR {
				t.Errorf("errors.Is(%v, ErrInvalidCSR) = %v, want %v", err, !tt.wantCSR, tt.wantCSR)
			}
			if got != "" {
				t.Error("a certificate returned with the error")
			}
		})
	}
}

func TestParseAgentCN(t *testing.T) {
	tests := []struct {
		cn     string
		wantID int64
		wantOK bool
	}{
		{"netmon-agent-1", 1, true},
		{"netmon-agent-9223372036854775807", 9223372036854775807, true},
		{"netmon-agent-9223372036854775808", 0, false},
		{"netmon-agent-0", 0, false},
		{"netmon-agent-01", 0, false},
		{"netmon-agent--1", 0, false},
		{"netmon-agent-+1", 0, false},
		{"netmon-agent-1 ", 0, false},
		{"netmon-agent-1a", 0, false},
		{"netmon-agent-", 0, false},
		{"NETMON-AGENT-1", 0, false},
		{"xnetmon-agent-1", 0, false},
		{"admin", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.cn, func(t *testing.T) {
			id, ok := ParseAgentCN(tt.cn)
			if id != tt.wantID || ok != tt.wantOK {
				t.Errorf("ParseAgentCN(%q) = %d, %v, want %d, %v", tt.cn, id, ok, tt.wantID, tt.wantOK)
			}
		})
	}
	if got := AgentCN(42); got != "netmon-agent-42" {
		t.Errorf("AgentCN(42) = %q", got)
	}
}

func TestAgentID(t *testing.T) {
	a, _ := newAuthority(t, testConfig(t), newClock())
	hub := testCA{a.ca, a.caKey}
	good := agentCert(t, a, 12).Leaf
	noEKU := hub.issue(t, &x509.Certificate{Subject: pkix.Name{CommonName: "netmon-agent-12"}}).Leaf
	admin := hub.issue(t, &x509.Certificate{Subject: pkix.Name{CommonName: "admin"}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}).Leaf
	chain := func(leaf *x509.Certificate) [][]*x509.Certificate { return [][]*x509.Certificate{{leaf, a.ca}} }

	tests := []struct {
		desc   string
		cs     *tls.ConnectionState
		wantID int64
		wantOK bool
	}{
		{"nil state", nil, 0, false},
		{"no certificate", &tls.ConnectionState{}, 0, false},
		{"presented but not verified", &tls.ConnectionState{PeerCertificates: []*x509.Certificate{good}}, 0, false},
		{"empty verified chain", &tls.ConnectionState{PeerCertificates: []*x509.Certificate{good}, VerifiedChains: [][]*x509.Certificate{{}}}, 0, false},
		{"verified agent", &tls.ConnectionState{PeerCertificates: []*x509.Certificate{good}, VerifiedChains: chain(good)}, 12, true},
		{"verified, no client usage", &tls.ConnectionState{PeerCertificates: []*x509.Certificate{noEKU}, VerifiedChains: chain(noEKU)}, 0, false},
		{"verified, CN admin", &tls.ConnectionState{PeerCertificates: []*x509.Certificate{admin}, VerifiedChains: chain(admin)}, 0, false},
		{"unverified agent beside a verified admin", &tls.ConnectionState{PeerCertificates: []*x509.Certificate{good}, VerifiedChains: chain(admin)}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			id, ok := AgentID(tt.cs)
			if id != tt.wantID || ok != tt.wantOK {
				t.Errorf("AgentID = %d, %v, want %d, %v", id, ok, tt.wantID, tt.wantOK)
			}
		})
	}
}

// FuzzSignClient feeds arbitrary request text to SignClient: it must
// never panic, and whatever it signs names the given agent and nothing
// else.
func FuzzSignClient(f *testing.F) {
	cfg := DefaultConfig()
	cfg.Dir = f.TempDir()
	cfg.Hosts = []string{"localhost"}
	a, err := New(nil, cfg, Deps{})
	if err != nil {
		f.Fatal(err)
	}
	good := newCSR(f, newKey(f, "p256"), "netmon-agent-999")
	b, _ := pem.Decode([]byte(good))
	f.Add(good)
	f.Add(newCSR(f, newKey(f, "ed25519"), "admin"))
	f.Add(newCSR(f, newKey(f, "rsa1024"), ""))
	f.Add(string(b.Bytes))
	f.Add(strings.Replace(good, "CERTIFICATE REQUEST", "CERTIFICATE", -1))
	f.Add(good[:len(good)/2])
	f.Add("-----BEGIN CERTIFICATE REQUEST-----\n\n-----END CERTIFICATE REQUEST-----\n")
	f.Add("")
	f.Fuzz(func(t *testing.T, csr string) {
		certPEM, _, err := a.SignClient(csr, 5)
		if err != nil {
			return
		}
		c := parseCertPEM(t, certPEM)
		if c.Subject.String() != "CN=netmon-agent-5" || !slices.Equal(c.ExtKeyUsage, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}) || c.IsCA {
			t.Fatalf("signed %q as %s %v", csr, c.Subject, c.ExtKeyUsage)
		}
	})
}
