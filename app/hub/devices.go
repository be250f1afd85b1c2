package hub

import (
	"context"
	"errors"
	"net/http"

	"netmon/app/api"
	"netmon/app/netguard"
	"netmon/collectors/fwrest"
	"netmon/collectors/snmp"
	"netmon/store"
	"netmon/store/record"
	"netmon/store/vault"
)

// buildDevices builds the SNMP poller over the stored devices (their
// credentials unsealed by the vault).
//
// Outbound: the poller dials only the devices' own configured addresses,
// through the guard's hook for configured addresses (never a cloud
// metadata address, even when a device's name resolves there).
func (h *Hub) buildDevices() {
	h.poller = snmp.New(h.log.With("component", "snmp"), h.cfg.SNMP, snmp.Deps{
		Control:    h.netGuard.ConfiguredControl,
		Targets:    pollTargets{db: h.db, vault: h.vault, log: h.log},
		Writer:     h.db,
		Registerer: h.reg,
	})
	h.parts.add("snmp", h.poller.Start, noCtx(h.poller.Stop))
	// The firewall REST devices, on their own schedule (at least 60 s),
	// each through the guard made for its own api_url, as the probe.
	h.fwPoller = fwrest.NewPoller(h.log.With("component", "fwrest"), fwrest.DefaultConfig(), fwrest.PollerDeps{
		Deps:       fwrest.Deps{TransportFor: fwProber{guard: h.netGuard}.transport},
		Targets:    pollTargets{db: h.db, vault: h.vault, log: h.log},
		Writer:     h.db,
		Registerer: h.reg,
	})
	h.parts.add("fwrest", h.fwPoller.Start, noCtx(h.fwPoller.Stop))
}

// fwProber probes firewall REST devices through the outbound guard: the
// address the device's api_url names as an IP literal is allowed by
// being configured; a host name must resolve to a public address or to
// a range of -outbound-allow, and a metadata address never passes.
type fwProber struct{ guard *netguard.Guard }

func (p fwProber) ProbeFirewall(ctx context.Context, d record.Device) (fwrest.Result, error) {
	return fwrest.Probe(ctx, fwrest.DefaultConfig(), fwrest.Deps{TransportFor: p.transport}, d)
}

// transport is the guarded transport of one device's api_url.
func (p fwProber) transport(apiURL string) *http.Transport {
	g, err := p.guard.ForURL(apiURL)
	if err != nil {
		g = p.guard // fwrest refuses the malformed URL with a clearer error
	}
	return g.Transport(netguard.ClientOptions{})
}

// pollTargets lists the stored devices with their credentials opened. A
// device whose credentials do not open (another vault key, a moved
// blob) is left out and logged, not polled with empty ones.
type pollTargets struct {
	db    *store.DB
	vault *vault.Vault
	log   interface {
		Warn(msg string, args ...any)
	}
}

func (t pollTargets) PollTargets(ctx context.Context) ([]record.Device, error) {
	list, err := t.db.Devices(ctx, "")
	if err != nil {
		return nil, err
	}
	out := make([]record.Device, 0, len(list))
	for _, d := range list {
		r, err := api.OpenDeviceSecrets(t.vault, d)
		if err != nil {
			t.log.Warn("device credentials do not open; not polled", "device", d.ID, "error", err)
			continue
		}
		out = append(out, r)
	}
	return out, nil
}

// devicePollers hands the API the SNMP poller's probe and has both
// pollers re-read the device list after a change.
type devicePollers struct {
	*snmp.Poller
	fw *fwrest.Poller
}

func (d devicePollers) Refresh(ctx context.Context) error {
	return errors.Join(d.Poller.Refresh(ctx), d.fw.Refresh(ctx))
}
