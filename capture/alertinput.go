package capture

import (
	"context"
	"time"

	"netmon/store/record"
)

// Traffic is the capture's snapshot as the alert engine's bw and target
// rules read it: the rates and the remote (non-local) endpoints.
func (c *Capture) Traffic() record.Traffic {
	s := c.Snapshot()
	t := record.Traffic{Running: s.Running, InBps: s.BpsIn, OutBps: s.BpsOut}
	for _, e := range s.TopEndpoints {
		if !e.Local {
			t.Endpoints = append(t.Endpoints, record.TrafficEndpoint{IP: e.IP, Total: e.Total})
		}
	}
	return t
}

// Names is the capture's part of the ioc rule's names: the snapshot's
// busiest DNS domains (agent 0), whatever since. A domain's TS is its
// count of queries and responses, so it is reported again when that
// grows.
func (c *Capture) Names(context.Context, time.Time) ([]record.ObservedName, error) {
	var out []record.ObservedName
	for _, d := range c.Snapshot().TopDomains {
		out = append(out, record.ObservedName{Name: d.Domain, Source: "dns", TS: d.Queries + d.Responses})
	}
	return out, nil
}
