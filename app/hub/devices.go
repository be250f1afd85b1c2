package hub

import "netmon/collectors/devices"

// buildDevices builds the device component (the registry and the one
// poller of SNMP and firewall REST devices; -poller) over the store and
// the vault.
//
// Outbound: SNMP dials only the devices' own configured addresses,
// through the guard's hook for configured addresses (never a cloud
// metadata address, even when a device's name resolves there); a REST
// device is reached through the guard made for its own api_url: the
// address it names as an IP literal is allowed by being configured, a
// host name must resolve to a public address or a range of
// -outbound-allow.
func (h *Hub) buildDevices() {
	h.devices = devices.New(h.log.With("component", "devices"), h.cfg.Devices, devices.Deps{
		IsLeader:   h.leader.IsLeader,
		Store:      h.db,
		Vault:      h.vault,
		Guard:      h.netGuard,
		Registerer: h.reg,
	})
	h.parts.add("devices", h.devices.Start, noCtx(h.devices.Stop))
}
