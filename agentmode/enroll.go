package agentmode

import (
	"context"
	"crypto/ecdsa"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"strings"

	"netmon/agentmode/state"
	"netmon/agentmode/wire"
)

// errNoEnrollToken: the agent must (re-)enroll but hub.token is empty.
var errNoEnrollToken = errors.New("no enroll token: set hub.token (flag -hub-token, env NETMON_HUB__TOKEN) to enroll this agent")

// enroll says hello with the enroll token and saves the identity the hub
// issues. The same machine id is sent every time, so a re-enrollment
// replaces this machine's record on the hub instead of adding one. Over
// https a CSR goes along; with nothing pinned yet the CA the hub returns
// is pinned here (trust on first use).
func (a *Agent) enroll(ctx context.Context) error {
	token := strings.TrimSpace(a.cfg.EnrollToken)
	if token == "" {
		return errNoEnrollToken
	}
	st := a.store.Get()
	hello := wire.Hello{
		Name: a.cfg.Name, Site: a.cfg.Site, Version: a.cfg.Version,
		ProtocolVersion: wire.ProtocolVersion, OS: runtime.GOOS, Arch: runtime.GOARCH,
		MachineID: st.MachineID,
	}
	var key *ecdsa.PrivateKey
	if a.hub.trust.current() != modePlain {
		var err error
		if key, hello.CSRPEM, err = newKeyAndCSR(); err != nil {
			return err
		}
	}
	var resp wire.HelloResponse
	cs, err := a.hub.post(ctx, wire.PathHello, http.Header{wire.HeaderEnrollToken: {token}}, hello, &resp)
	if err != nil {
		return &enrollError{err}
	}
	if !resp.Accepted || resp.AgentToken == "" || resp.AgentID <= 0 {
		return &enrollError{errors.New("hub did not accept the hello")}
	}
	if a.hub.trust.current() == modeTOFU {
		if err := a.pinFirstUse(cs, resp.CACertPEM); err != nil {
			return err
		}
	} else {
		a.noteHubCA(resp.CACertPEM)
	}
	if resp.ClientCertPEM != "" && key != nil {
		if err := a.saveClientCert(resp.ClientCertPEM, key); err != nil {
			a.log.Warn("client certificate not usable; the bearer token identifies the agent", "err", err)
		}
	}
	proto := wire.ProtocolVersion
	if resp.ProtocolVersion > 0 && resp.ProtocolVersion < proto {
		proto = resp.ProtocolVersion
		a.log.Warn("hub speaks an older agent protocol; degrading", "hub_protocol", resp.ProtocolVersion, "agent_protocol", wire.ProtocolVersion)
	}
	if err := a.store.Update(func(s *state.State) {
		s.HubURL, s.AgentID, s.AgentToken = a.cfg.HubURL, resp.AgentID, resp.AgentToken
		s.Unauthorized, s.ProtocolVersion = 0, proto
	}); err != nil {
		// The identity works in memory; without the file a restart
		// enrolls again (and replaces this record through the machine id).
		a.log.Error("cannot save the state file", "err", err)
	}
	a.adoptInterval(resp.TelemetryIntervalSeconds)
	a.adoptPcapPolicy(resp.PcapEnabled)
	a.log.Info("enrolled with the hub", "agent_id", resp.AgentID, "interval_seconds", resp.TelemetryIntervalSeconds,
		"deep_collection_policy", resp.PcapEnabled, "tls", a.hub.trust.current().String())
	return nil
}

// pinFirstUse pins the CA the hub returned, after checking that the
// server certificate of this very connection chains to it.
func (a *Agent) pinFirstUse(cs *tls.ConnectionState, caPEM string) error {
	if caPEM == "" {
		return errors.New("the hub returned no CA to pin (is its TLS terminated by a proxy?): pass the CA of the hub's certificate with -hub-ca")
	}
	if cs == nil || len(cs.PeerCertificates) == 0 {
		return errors.New("no server certificate seen at the first hello")
	}
	cas, err := parseCerts([]byte(caPEM))
	if err != nil {
		return fmt.Errorf("CA returned by the hub: %w", err)
	}
	roots := x509.NewCertPool()
	for _, c := range cas {
		roots.AddCert(c)
	}
	if err := verifyChain(cs.PeerCertificates, x509.VerifyOptions{Roots: roots}); err != nil {
		return &TrustError{Anchor: "hub-returned", TrustedCA: fingerprint(cas[0]), PresentedCA: presentedCA(cs.PeerCertificates),
			Err: fmt.Errorf("the hub's server certificate is not signed by the CA it returned; refusing to pin it (if the hub uses an operator-supplied certificate, pass its CA with -hub-ca): %w", err)}
	}
	if err := state.WriteFile(a.files.CA, []byte(caPEM)); err != nil {
		return err
	}
	if err := a.store.Update(func(s *state.State) { s.CAPEM = caPEM }); err != nil {
		return fmt.Errorf("pin hub CA: %w", err)
	}
	if err := a.hub.trust.useCA(modePinned, "pinned", []byte(caPEM)); err != nil {
		return err
	}
	a.log.Warn("hub trusted on first use: its CA is pinned; a hub with another CA will be refused",
		"ca_sha256", fingerprint(cas[0]), "ca_file", a.files.CA)
	return nil
}

// enrollError marks a failed hello, so the log can say what to fix.
type enrollError struct{ err error }

func (e *enrollError) Error() string { return "enrollment: " + e.err.Error() }
func (e *enrollError) Unwrap() error { return e.err }

// hint explains an enrollment refusal in operator terms.
func (e *enrollError) hint() string {
	var se *StatusError
	if !errors.As(e.err, &se) {
		return "no answer from the hub (unreachable, or its certificate refused): see err"
	}
	switch se.Code {
	case http.StatusUnauthorized:
		return "enroll token invalid, revoked or expired: check hub.token"
	case http.StatusForbidden:
		return "this machine's address is outside the enroll token's allowed CIDRs"
	case http.StatusConflict:
		return "enroll token exhausted (max uses reached): create a new one on the hub"
	case http.StatusTooManyRequests:
		return "too many failed enrollments from this address: the hub throttles for a minute"
	default:
		return "retrying"
	}
}
