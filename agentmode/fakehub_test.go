package agentmode

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"netmon/agentmode/wire"
)

// testCA is a throwaway CA that signs the fake hub's server certificate
// and the agents' client certificates, as the hub's own CA does.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  string
}

func newTestCA(t *testing.T, cn string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(10 * 365 * 24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testCA{cert: cert, key: key, pem: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))}
}

var serial int64 = 100

func (ca *testCA) issue(t *testing.T, now time.Time, pub any, cn string, life time.Duration, usage x509.ExtKeyUsage, ips ...net.IP) []byte {
	t.Helper()
	serial++
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    now.Add(-time.Minute),
		NotAfter:     now.Add(life),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
		IPAddresses:  ips,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, pub, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

// serverCert is a hub certificate for 127.0.0.1 whose chain (leaf + CA)
// is sent in the handshake.
func (ca *testCA) serverCert(t *testing.T) *tls.Certificate {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der := ca.issue(t, time.Now(), &key.PublicKey, "netmon-hub", time.Hour, x509.ExtKeyUsageServerAuth, net.ParseIP("127.0.0.1"))
	return &tls.Certificate{Certificate: [][]byte{der, ca.cert.Raw}, PrivateKey: key}
}

// signCSR signs an agent's request as the hub does: CN netmon-agent-<id>.
func (ca *testCA) signCSR(t *testing.T, now time.Time, csrPEM string, id int64, life time.Duration) (string, error) {
	b, _ := pem.Decode([]byte(csrPEM))
	if b == nil {
		return "", fmt.Errorf("no PEM")
	}
	csr, err := x509.ParseCertificateRequest(b.Bytes)
	if err != nil {
		return "", err
	}
	if err := csr.CheckSignature(); err != nil {
		return "", err
	}
	der := ca.issue(t, now, csr.PublicKey, fmt.Sprintf("%s%d", wire.CertCNPrefix, id), life, x509.ExtKeyUsageClientAuth)
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})), nil
}

// fakeHub speaks the hub's side of agentmode/wire. The real hub's
// end-to-end test is the fleet package's; this one lets the agent's
// behaviour be checked call by call.
type fakeHub struct {
	t   *testing.T
	srv *httptest.Server

	mu          sync.Mutex
	enrollToken string
	interval    int // hello's telemetry_interval_seconds
	ackInterval int // telemetry answers' interval
	nextID      int64
	tokens      map[string]int64 // agent token -> id
	machines    map[string]int64 // machine id -> id
	hellos      []wire.Hello
	batches     []wire.Telemetry // stored, in arrival order
	bearers     []string         // token of each stored batch
	clientCNs   []string         // client certificate CN of each telemetry call
	clientSer   []string         // and its serial
	seen        map[uint64]bool
	script      []int // statuses for the next telemetry calls (0 = normal)
	unauth      int   // 401s answered to telemetry
	calls       int   // telemetry calls
	block       chan struct{}
	certCalls   int
	pcapOff     bool // the -agent-pcap=false policy, in hello and telemetry answers

	// TLS
	ca       *testCA // signs client certificates and is returned at hello
	returnCA string  // CA PEM returned at hello (defaults to ca.pem)
	server   *tls.Certificate
	certLife time.Duration
	now      func() time.Time
}

func newFakeHub(t *testing.T, ca *testCA) *fakeHub {
	h := &fakeHub{t: t, enrollToken: "ent_test", interval: 30, nextID: 1,
		tokens: map[string]int64{}, machines: map[string]int64{}, seen: map[uint64]bool{},
		ca: ca, certLife: 90 * 24 * time.Hour, now: time.Now}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+wire.PathHello, h.hello)
	mux.HandleFunc("POST "+wire.PathTelemetry, h.telemetry)
	mux.HandleFunc("POST "+wire.PathCert, h.cert)
	h.srv = httptest.NewUnstartedServer(mux)
	// Refused handshakes are the point of some tests: keep them quiet.
	h.srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	if ca != nil {
		h.server = ca.serverCert(t)
		pool := x509.NewCertPool()
		pool.AddCert(ca.cert)
		// A config per handshake, so a test can swap the server
		// certificate (httptest would otherwise serve its own for an IP).
		h.srv.TLS = &tls.Config{
			GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
				h.mu.Lock()
				defer h.mu.Unlock()
				return &tls.Config{
					Time:         h.now,
					Certificates: []tls.Certificate{*h.server},
					ClientAuth:   tls.VerifyClientCertIfGiven,
					ClientCAs:    pool,
					NextProtos:   []string{"http/1.1"},
				}, nil
			},
		}
		h.srv.StartTLS()
	} else {
		h.srv.Start()
	}
	t.Cleanup(h.srv.Close)
	return h
}

func (h *fakeHub) URL() string { return h.srv.URL }

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func (h *fakeHub) hello(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if r.Header.Get(wire.HeaderEnrollToken) != h.enrollToken {
		writeJSON(w, 401, wire.ErrorBody{Error: "invalid enroll token"})
		return
	}
	var hello wire.Hello
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, wire.MaxHelloBytes)).Decode(&hello); err != nil {
		writeJSON(w, 400, wire.ErrorBody{Error: err.Error()})
		return
	}
	h.hellos = append(h.hellos, hello)
	if old, ok := h.machines[hello.MachineID]; ok {
		h.forgetLocked(old) // the same machine replaces its record
	}
	id := h.nextID
	h.nextID++
	token := fmt.Sprintf("agt_%d", id)
	h.tokens[token] = id
	h.machines[hello.MachineID] = id
	resp := wire.HelloResponse{Accepted: true, AgentID: id, AgentToken: token, TelemetryIntervalSeconds: h.interval, ProtocolVersion: 1, PcapEnabled: !h.pcapOff}
	if h.ca != nil && hello.CSRPEM != "" {
		cert, err := h.ca.signCSR(h.t, h.now(), hello.CSRPEM, id, h.certLife)
		if err != nil {
			writeJSON(w, 400, wire.ErrorBody{Error: err.Error()})
			return
		}
		resp.ClientCertPEM, resp.CACertPEM = cert, h.ca.pem
		if h.returnCA != "" {
			resp.CACertPEM = h.returnCA
		}
	}
	writeJSON(w, 200, resp)
}

func (h *fakeHub) agentLocked(r *http.Request) (int64, bool) {
	id, ok := h.tokens[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]
	return id, ok
}

func (h *fakeHub) telemetry(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	block := h.block
	h.mu.Unlock()
	if block != nil {
		select {
		case <-block:
		case <-r.Context().Done():
			return
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls++
	if len(h.script) > 0 {
		code := h.script[0]
		h.script = h.script[1:]
		if code != 0 {
			if code == 401 {
				h.unauth++
			}
			if code == 429 {
				w.Header().Set("Retry-After", "60")
			}
			writeJSON(w, code, wire.ErrorBody{Error: "scripted"})
			return
		}
	}
	if _, ok := h.agentLocked(r); !ok {
		h.unauth++
		writeJSON(w, 401, wire.ErrorBody{Error: "unknown agent"})
		return
	}
	var b wire.Telemetry
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, wire.MaxTelemetryBytes)).Decode(&b); err != nil {
		writeJSON(w, 400, wire.ErrorBody{Error: err.Error()})
		return
	}
	cn, ser := "", ""
	if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
		cn, ser = r.TLS.PeerCertificates[0].Subject.CommonName, r.TLS.PeerCertificates[0].SerialNumber.String()
	}
	h.clientCNs, h.clientSer = append(h.clientCNs, cn), append(h.clientSer, ser)
	if !h.seen[b.Seq] {
		h.seen[b.Seq] = true
		h.batches = append(h.batches, b)
		h.bearers = append(h.bearers, strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
	}
	iv := h.interval
	if h.ackInterval > 0 {
		iv = h.ackInterval
	}
	pcap := !h.pcapOff
	writeJSON(w, 200, wire.TelemetryResponse{OK: true, Interval: iv, PcapEnabled: &pcap})
}

func (h *fakeHub) cert(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ca == nil {
		writeJSON(w, 404, wire.ErrorBody{Error: "tls is off"})
		return
	}
	id, ok := h.agentLocked(r)
	if !ok {
		writeJSON(w, 401, wire.ErrorBody{Error: "unknown agent"})
		return
	}
	var req wire.CertRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeJSON(w, 400, wire.ErrorBody{Error: err.Error()})
		return
	}
	h.certCalls++
	cert, err := h.ca.signCSR(h.t, h.now(), req.CSRPEM, id, h.certLife)
	if err != nil {
		writeJSON(w, 400, wire.ErrorBody{Error: err.Error()})
		return
	}
	writeJSON(w, 200, wire.CertResponse{ClientCertPEM: cert, CACertPEM: h.ca.pem})
}

// forget deletes agent id, as the hub does when an operator deletes it:
// its token then answers 401.
func (h *fakeHub) forget(id int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.forgetLocked(id)
}

func (h *fakeHub) forgetLocked(id int64) {
	for tok, x := range h.tokens {
		if x == id {
			delete(h.tokens, tok)
		}
	}
}

// register adds an agent known to the hub (for tests starting from an
// enrolled state file).
func (h *fakeHub) register(token string, id int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.tokens[token] = id
}

// setPcapPolicy sets the deep-collection policy of the next answers.
func (h *fakeHub) setPcapPolicy(enabled bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.pcapOff = !enabled
}

func (h *fakeHub) setScript(codes ...int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.script = codes
}

// swapServerCert makes new connections see c; open ones are closed, as
// when another server takes the hub's address.
func (h *fakeHub) swapServerCert(c *tls.Certificate) {
	h.mu.Lock()
	h.server = c
	h.mu.Unlock()
	h.srv.CloseClientConnections()
}

// setNow makes the hub issue certificates and check client certificates
// on another clock (the agent's fake one).
func (h *fakeHub) setNow(now func() time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.now = now
}

// snapshot returns a consistent copy of what the hub saw.
type hubSeen struct {
	hellos    []wire.Hello
	batches   []wire.Telemetry
	bearers   []string
	clientCNs []string
	clientSer []string
	unauth    int
	calls     int
	certCalls int
}

func (h *fakeHub) seenNow() hubSeen {
	h.mu.Lock()
	defer h.mu.Unlock()
	return hubSeen{
		hellos: append([]wire.Hello(nil), h.hellos...), batches: append([]wire.Telemetry(nil), h.batches...),
		bearers: append([]string(nil), h.bearers...), clientCNs: append([]string(nil), h.clientCNs...),
		clientSer: append([]string(nil), h.clientSer...), unauth: h.unauth, calls: h.calls, certCalls: h.certCalls,
	}
}

func (s hubSeen) seqs() []uint64 {
	var out []uint64
	for _, b := range s.batches {
		out = append(out, b.Seq)
	}
	return out
}
