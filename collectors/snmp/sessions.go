package snmp

import (
	"context"
	"errors"
	"strings"

	"github.com/gosnmp/gosnmp"

	"netmon/store/record"
)

// devSession is a device's gosnmp session kept open between polls: a
// new session per poll cost a socket, its connect and close system calls
// and, for SNMPv3, an engine discovery round trip before the first real
// request (and the USM state built again). The worker polling the device
// owns it while the device is running; otherwise it is touched only
// by the device component's scheduler.
type devSession struct {
	g   *gosnmp.GoSNMP
	dev record.Device // the settings it was opened with
}

// close drops the session (nil-safe).
func (s *devSession) close() {
	if s != nil && s.g != nil {
		_ = s.g.Close()
		s.g = nil
	}
}

// sameAgent reports whether a session opened for a still speaks for b:
// same address, version and credentials.
func sameAgent(a, b record.Device) bool {
	return a.Host == b.Host && a.SNMPVersion == b.SNMPVersion && a.Community == b.Community &&
		a.V3User == b.V3User && a.V3AuthProto == b.V3AuthProto && a.V3AuthPass == b.V3AuthPass &&
		a.V3PrivProto == b.V3PrivProto && a.V3PrivPass == b.V3PrivPass
}

// session returns the device's open session for dev when it has one
// (reused: true), else opens one and keeps it in s (s nil: a one-off
// session the caller closes).
func (p *Driver) session(ctx context.Context, dev record.Device, s *devSession) (g *gosnmp.GoSNMP, reused bool, err error) {
	if s != nil && s.g != nil {
		if sameAgent(s.dev, dev) {
			s.g.Context = ctx // this poll's deadline and cancellation
			return s.g, true, nil
		}
		s.close()
	}
	g, err = newSession(ctx, dev, p.cfg, p.deps.Control)
	if err != nil {
		return nil, false, err
	}
	if s != nil {
		s.g, s.dev = g, dev
	}
	return g, false, nil
}

// staleSession reports whether err may come from a kept session that
// no longer fits its agent: a v3 agent that restarted has a new engine
// boot count or ID, so it answers a report (not in time window, unknown
// engine ID) or something gosnmp cannot authenticate. A fresh session
// rediscovers the engine; a timeout is not helped by one.
func staleSession(err error) bool {
	var rep errReport
	return err != nil && (errors.As(err, &rep) || strings.Contains(err.Error(), "not authentic"))
}
