package pki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/x509"
	"encoding/pem"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestNewFreshDir(t *testing.T) {
	clock := newClock()
	cfg := testConfig(t)
	a, logs := newAuthority(t, cfg, clock)
	now := clock.Now()

	modes := []struct {
		name string
		want os.FileMode
	}{
		{"", 0o700 | os.ModeDir},
		{caKeyFile, 0o600},
		{serverKeyFile, 0o600},
		{caCertFile, 0o644},
		{serverCertFile, 0o644},
	}
	for _, m := range modes {
		fi, err := os.Stat(filepath.Join(cfg.Dir, m.name))
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode() & (os.ModeDir | os.ModePerm); got != m.want {
			t.Errorf("mode of %q = %v, want %v", m.name, got, m.want)
		}
	}

	ca, err := readCert(filepath.Join(cfg.Dir, caCertFile))
	if err != nil {
		t.Fatal(err)
	}
	if pub, ok := ca.PublicKey.(*ecdsa.PublicKey); !ok || pub.Curve != elliptic.P256() {
		t.Errorf("CA key = %T, want ECDSA P-256", ca.PublicKey)
	}
	if !ca.IsCA || !ca.BasicConstraintsValid || ca.MaxPathLen != 0 || !ca.MaxPathLenZero {
		t.Errorf("CA constraints: IsCA=%v valid=%v maxPathLen=%d zero=%v", ca.IsCA, ca.BasicConstraintsValid, ca.MaxPathLen, ca.MaxPathLenZero)
	}
	if ca.KeyUsage != x509.KeyUsageCertSign|x509.KeyUsageCRLSign {
		t.Errorf("CA key usage = %v", ca.KeyUsage)
	}
	if ca.Subject.CommonName != "netmon hub CA" {
		t.Errorf("CA CN = %q", ca.Subject.CommonName)
	}
	checkDates(t, "CA", ca, now, 3650*24*time.Hour)
	if err := ca.CheckSignatureFrom(ca); err != nil {
		t.Errorf("CA not self-signed: %v", err)
	}

	if got := parseCertPEM(t, a.CAPEM()); !got.Equal(ca) {
		t.Error("CAPEM differs from ca.crt")
	}

	srv, err := readCert(filepath.Join(cfg.Dir, serverCertFile))
	if err != nil {
		t.Fatal(err)
	}
	if pub, ok := srv.PublicKey.(*ecdsa.PublicKey); !ok || pub.Curve != elliptic.P256() {
		t.Errorf("server key = %T, want ECDSA P-256", srv.PublicKey)
	}
	if !slices.Equal(srv.ExtKeyUsage, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}) || srv.IsCA {
		t.Errorf("server EKU = %v IsCA = %v, want [ServerAuth] false", srv.ExtKeyUsage, srv.IsCA)
	}
	if !slices.Equal(srv.DNSNames, []string{"localhost"}) {
		t.Errorf("server DNS SANs = %v, want [localhost]", srv.DNSNames)
	}
	if got := ipStrings(srv.IPAddresses); !slices.Equal(got, []string{"127.0.0.1", "::1"}) {
		t.Errorf("server IP SANs = %v, want [127.0.0.1 ::1]", got)
	}
	checkDates(t, "server", srv, now, 395*24*time.Hour)
	if _, err := srv.Verify(x509.VerifyOptions{DNSName: "localhost", Roots: a.caPool, CurrentTime: now}); err != nil {
		t.Errorf("server certificate does not verify for localhost: %v", err)
	}

	out := logs.String()
	if !strings.Contains(out, "server certificate issued") || !strings.Contains(out, "not_after=") {
		t.Errorf("no issue event in log:\n%s", out)
	}
	if strings.Contains(out, "PRIVATE KEY") {
		t.Error("log contains a private key")
	}

	// A restart loads the same CA and server certificate.
	before := snapshot(t, cfg.Dir)
	b, _ := newAuthority(t, cfg, clock)
	if b.CAPEM() != a.CAPEM() {
		t.Error("second New: another CA, want the one on disk")
	}
	if b.server.Leaf.SerialNumber.Cmp(srv.SerialNumber) != 0 {
		t.Error("second New re-issued the server certificate")
	}
	if after := snapshot(t, cfg.Dir); !maps.Equal(before, after) {
		t.Error("second New changed the dir")
	}
}

// checkDates wants NotBefore 5 minutes before now and a life of life.
func checkDates(t *testing.T, what string, c *x509.Certificate, now time.Time, life time.Duration) {
	t.Helper()
	// Certificates keep whole seconds.
	if d := c.NotBefore.Sub(now.Add(-clockSkew)); d < -time.Second || d > time.Second {
		t.Errorf("%s NotBefore = %v, want %v", what, c.NotBefore, now.Add(-clockSkew))
	}
	if d := c.NotAfter.Sub(now.Add(life)); d < -time.Second || d > time.Second {
		t.Errorf("%s NotAfter = %v, want %v", what, c.NotAfter, now.Add(life))
	}
}

func ipStrings(ips []net.IP) []string {
	var s []string
	for _, ip := range ips {
		s = append(s, ip.String())
	}
	return s
}

func TestNewRefusesDamagedDir(t *testing.T) {
	otherCA := newTestCA(t, "someone else")
	tests := []struct {
		desc    string
		damage  func(t *testing.T, dir string, clock *testClock)
		wantErr string
	}{
		{"ca.key garbage", func(t *testing.T, dir string, _ *testClock) {
			os.WriteFile(filepath.Join(dir, caKeyFile), []byte("garbage"), 0o600)
		}, "no PEM private key"},
		{"ca.crt garbage", func(t *testing.T, dir string, _ *testClock) {
			os.WriteFile(filepath.Join(dir, caCertFile), []byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"), 0o644)
		}, "parse"},
		{"ca.key of another key", func(t *testing.T, dir string, _ *testClock) {
			pem, _ := marshalKey(newKey(t, "p256"))
			os.WriteFile(filepath.Join(dir, caKeyFile), pem, 0o600)
		}, "does not belong to"},
		{"ca.crt missing", func(t *testing.T, dir string, _ *testClock) {
			os.Remove(filepath.Join(dir, caCertFile))
		}, "ca.crt is missing"},
		{"ca.key missing", func(t *testing.T, dir string, _ *testClock) {
			os.Remove(filepath.Join(dir, caKeyFile))
		}, "ca.key is missing"},
		{"ca.crt not a CA", func(t *testing.T, dir string, _ *testClock) {
			os.Rename(filepath.Join(dir, serverCertFile), filepath.Join(dir, caCertFile))
			os.Rename(filepath.Join(dir, serverKeyFile), filepath.Join(dir, caKeyFile))
		}, "not a CA certificate"},
		{"CA expired", func(t *testing.T, dir string, clock *testClock) {
			clock.Set(clock.Now().Add(11 * 365 * 24 * time.Hour))
		}, "expired"},
		{"server.key of another key", func(t *testing.T, dir string, _ *testClock) {
			pem, _ := marshalKey(newKey(t, "p256"))
			os.WriteFile(filepath.Join(dir, serverKeyFile), pem, 0o600)
		}, "private key does not match public key"},
		{"server.key missing", func(t *testing.T, dir string, _ *testClock) {
			os.Remove(filepath.Join(dir, serverKeyFile))
		}, "only one of"},
		{"server pair from another CA", func(t *testing.T, dir string, _ *testClock) {
			pair := otherCA.issue(t, &x509.Certificate{DNSNames: []string{"localhost"}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
			writePair(t, pair, filepath.Join(dir, serverCertFile), filepath.Join(dir, serverKeyFile))
		}, "was not issued by ca.crt"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			clock := newClock()
			cfg := testConfig(t)
			newAuthority(t, cfg, clock)
			tt.damage(t, cfg.Dir, clock)
			before := snapshot(t, cfg.Dir)
			_, err := New(nil, cfg, Deps{Now: clock.Now})
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("New = %v, want an error containing %q", err, tt.wantErr)
			}
			if after := snapshot(t, cfg.Dir); !maps.Equal(before, after) {
				t.Errorf("New changed the dir after refusing it")
			}
		})
	}
}

func TestNewHostsChanged(t *testing.T) {
	clock := newClock()
	cfg := testConfig(t)
	a, _ := newAuthority(t, cfg, clock)

	cfg.Hosts = []string{"hub.example.com", "[2001:db8::1]", "10.0.0.1"}
	b, logs := newAuthority(t, cfg, clock)
	if b.CAPEM() != a.CAPEM() {
		t.Error("new hosts changed the CA")
	}
	leaf, err := readCert(filepath.Join(cfg.Dir, serverCertFile))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(leaf.DNSNames, []string{"hub.example.com"}) || !slices.Equal(ipStrings(leaf.IPAddresses), []string{"2001:db8::1", "10.0.0.1"}) {
		t.Errorf("SANs = %v %v, want the new hosts", leaf.DNSNames, leaf.IPAddresses)
	}
	if !strings.Contains(logs.String(), "hosts changed") {
		t.Errorf("no re-issue reason in log:\n%s", logs.String())
	}
}

func TestNewConfig(t *testing.T) {
	tests := []struct {
		desc    string
		edit    func(*Config)
		wantErr string
	}{
		{"cert without key", func(c *Config) { c.CertFile = "x.crt" }, "set both or neither"},
		{"key without cert", func(c *Config) { c.KeyFile = "x.key" }, "set both or neither"},
		{"no dir", func(c *Config) { c.Dir = "" }, "tls dir is empty"},
		{"negative life", func(c *Config) { c.ClientLife = -time.Hour }, "negative"},
		{"dir is a file", func(c *Config) {
			os.WriteFile(c.Dir, nil, 0o600)
		}, "create tls dir"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			cfg := testConfig(t)
			tt.edit(&cfg)
			if _, err := New(nil, cfg, Deps{}); err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("New = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestDefaultConfig(t *testing.T) {
	// Hosts stays empty in the defaults (a configuration shows only the
	// hosts an operator named); New fills DefaultHosts() in.
	if len(DefaultConfig().Hosts) != 0 {
		t.Errorf("default hosts %v, want none named", DefaultConfig().Hosts)
	}
	cfg, err := normalize(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.CALife != 3650*24*time.Hour || cfg.ServerLife != 395*24*time.Hour || cfg.ClientLife != 90*24*time.Hour {
		t.Errorf("lifetimes = %v %v %v", cfg.CALife, cfg.ServerLife, cfg.ClientLife)
	}
	for _, h := range []string{"localhost", "127.0.0.1", "::1"} {
		if !slices.Contains(cfg.Hosts, h) {
			t.Errorf("default hosts %v lack %s", cfg.Hosts, h)
		}
	}
	if name, err := os.Hostname(); err == nil && name != "" && !slices.Contains(cfg.Hosts, name) {
		t.Errorf("default hosts %v lack the host name %s", cfg.Hosts, name)
	}
}

func TestNewLoadsOperatorFormats(t *testing.T) {
	clock := newClock()
	cfg := testConfig(t)
	a, _ := newAuthority(t, cfg, clock)

	// openssl writes SEC 1 "EC PRIVATE KEY"; a CA key converted that way
	// still loads, and a key left readable by others is reported.
	der, err := x509.MarshalECPrivateKey(a.caKey.(*ecdsa.PrivateKey))
	if err != nil {
		t.Fatal(err)
	}
	keyPath := filepath.Join(cfg.Dir, caKeyFile)
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(keyPath, 0o644)
	b, logs := newAuthority(t, cfg, clock)
	if b.CAPEM() != a.CAPEM() {
		t.Error("SEC 1 CA key: another CA")
	}
	if !strings.Contains(logs.String(), "private key readable by others") {
		t.Errorf("no warning for a 0644 key:\n%s", logs.String())
	}
}
