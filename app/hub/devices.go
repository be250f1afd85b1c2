package hub

import (
	"context"

	"netmon/app/api"
	"netmon/app/netguard"
	"netmon/app/topology"
	"netmon/collectors/fwrest"
	"netmon/collectors/snmp"
	"netmon/store"
	"netmon/store/record"
	"netmon/store/vault"
)

// buildDevices builds the SNMP poller over the stored devices (their
// credentials unsealed by the vault) and the topology service.
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
	h.topology = topology.New(h.log.With("component", "topology"), h.db)
	h.parts.add("topology", h.topology.Start, noCtx(h.topology.Stop))
}

// fwProber probes firewall REST devices through the outbound guard: the
// address the device's api_url names as an IP literal is allowed by
// being configured; a host name must resolve to a public address or to
// a range of -outbound-allow, and a metadata address never passes.
type fwProber struct{ guard *netguard.Guard }

func (p fwProber) ProbeFirewall(ctx context.Context, d record.Device) (fwrest.Result, error) {
	g, err := p.guard.ForURL(d.APIURL)
	if err != nil {
		g = p.guard // fwrest refuses the malformed URL with a clearer error
	}
	return fwrest.Probe(ctx, fwrest.DefaultConfig(), fwrest.Deps{Transport: g.Transport(netguard.ClientOptions{})}, d)
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
