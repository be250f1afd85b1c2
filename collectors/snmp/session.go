package snmp

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/gosnmp/gosnmp"

	"netmon/store/record"
)

// newSession builds the gosnmp session of a device: version, community
// or USM user, the timeouts of cfg and the guard's Control hook.
func newSession(ctx context.Context, d record.Device, cfg Config, control Control) (*gosnmp.GoSNMP, error) {
	host, port, err := splitHost(d.Host)
	if err != nil {
		return nil, err
	}
	g := &gosnmp.GoSNMP{
		Target: host, Port: port, Transport: "udp", Context: ctx,
		Timeout: cfg.Timeout, Retries: cfg.Retries, MaxOids: gosnmp.MaxOids,
		Community: d.Community,
	}
	if control != nil {
		g.Control = control
	}
	switch d.SNMPVersion {
	case "1":
		g.Version = gosnmp.Version1
	case "", "2c", "2":
		g.Version = gosnmp.Version2c
	case "3":
		g.Version = gosnmp.Version3
		g.SecurityModel = gosnmp.UserSecurityModel
		usm := &gosnmp.UsmSecurityParameters{UserName: d.V3User}
		g.MsgFlags = gosnmp.NoAuthNoPriv
		if d.V3AuthProto != "" {
			if usm.AuthenticationProtocol, err = authProto(d.V3AuthProto); err != nil {
				return nil, err
			}
			usm.AuthenticationPassphrase = d.V3AuthPass
			g.MsgFlags = gosnmp.AuthNoPriv
			if d.V3PrivProto != "" {
				if usm.PrivacyProtocol, err = privProto(d.V3PrivProto); err != nil {
					return nil, err
				}
				usm.PrivacyPassphrase = d.V3PrivPass
				g.MsgFlags = gosnmp.AuthPriv
			}
		}
		g.SecurityParameters = usm
	default:
		return nil, fmt.Errorf("snmp_version %q: want 1, 2c or 3", d.SNMPVersion)
	}
	if err := g.Connect(); err != nil {
		return nil, fmt.Errorf("connect %s: %w", d.Host, err)
	}
	return g, nil
}

// splitHost parses host[:port] (port 161 by default; [v6]:port).
func splitHost(s string) (string, uint16, error) {
	if s == "" {
		return "", 0, fmt.Errorf("no host")
	}
	host, ps, err := net.SplitHostPort(s)
	if err != nil {
		// No port: a name, an IPv4 address or a bare IPv6 address.
		return strings.Trim(s, "[]"), 161, nil
	}
	p, err := strconv.ParseUint(ps, 10, 16)
	if err != nil || p == 0 {
		return "", 0, fmt.Errorf("host %q: bad port", s)
	}
	return host, uint16(p), nil
}

// AuthProtocols and PrivProtocols are the accepted v3 protocol names
// (spec 2.11).
var (
	AuthProtocols = []string{"SHA", "SHA256", "SHA512", "MD5"}
	PrivProtocols = []string{"AES", "AES256", "DES"}
)

func authProto(s string) (gosnmp.SnmpV3AuthProtocol, error) {
	switch strings.ToUpper(strings.ReplaceAll(s, "-", "")) {
	case "SHA":
		return gosnmp.SHA, nil
	case "SHA256":
		return gosnmp.SHA256, nil
	case "SHA512":
		return gosnmp.SHA512, nil
	case "MD5":
		return gosnmp.MD5, nil
	}
	return 0, fmt.Errorf("v3_auth_proto %q: want SHA, SHA256, SHA512 or MD5", s)
}

func privProto(s string) (gosnmp.SnmpV3PrivProtocol, error) {
	switch strings.ToUpper(strings.ReplaceAll(s, "-", "")) {
	case "AES":
		return gosnmp.AES, nil
	case "AES256":
		// Blumenthal key extension: what net-snmp's AES-256 speaks.
		return gosnmp.AES256, nil
	case "DES":
		return gosnmp.DES, nil
	}
	return 0, fmt.Errorf("v3_priv_proto %q: want AES, AES256 or DES", s)
}

// FieldError is a device setting that does not hold, named by its
// field (host, snmp_version, v3_user, v3_auth_proto, v3_priv_proto): the
// API answers it as that field's error.
type FieldError struct {
	Field string
	Err   error
}

func (e *FieldError) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *FieldError) Unwrap() error { return e.Err }

// ValidateDevice checks what a device's SNMP settings must hold before
// it is saved or probed; its error is a *FieldError.
func ValidateDevice(d record.Device) error {
	bad := func(field string, err error) error { return &FieldError{Field: field, Err: err} }
	if d.Host != "" {
		if _, _, err := splitHost(d.Host); err != nil {
			return bad("host", err)
		}
	}
	switch d.SNMPVersion {
	case "1", "2c":
	case "3":
		if d.V3User == "" {
			return bad("v3_user", fmt.Errorf("v3_user is required with snmp_version 3"))
		}
		if d.V3AuthProto != "" {
			if _, err := authProto(d.V3AuthProto); err != nil {
				return bad("v3_auth_proto", err)
			}
		}
		if d.V3PrivProto != "" {
			if d.V3AuthProto == "" {
				return bad("v3_priv_proto", fmt.Errorf("v3_priv_proto needs v3_auth_proto (authPriv)"))
			}
			if _, err := privProto(d.V3PrivProto); err != nil {
				return bad("v3_priv_proto", err)
			}
		}
	default:
		return bad("snmp_version", fmt.Errorf("snmp_version %q: want 1, 2c or 3", d.SNMPVersion))
	}
	return nil
}
