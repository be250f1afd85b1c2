package facts

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"

	"netmon/store"
	"netmon/store/record"
)

// Priorities of the device scope: its state, its alerts, then its
// interfaces (busiest and down first), resources, VPN and SD-WAN.
const (
	pDevStatus    = 100
	pDevAlerts    = 96
	pDevIfaceSum  = 95
	pDevOpenAlert = 93
	pDevResources = 92
	pDevVPN       = 90
	pDevSDWAN     = 88
	pDevIfaces    = 84
	// maxIfaces bounds the interfaces listed one by one.
	maxIfaces = 24
	// deviceLookback is how far back the latest samples are looked for.
	deviceLookback = day
)

// device adds device id's status, interfaces, resources, VPN and SD-WAN.
func (b *Builder) device(ctx context.Context, l *list, site string, id, now int64) error {
	d, err := b.deviceOf(ctx, site, id)
	if err != nil {
		return err
	}
	l.addHosts(d.Name, d.SysName, d.Host)
	status := "its last poll succeeded"
	switch {
	case !d.Enabled:
		status = "polling is disabled"
	case d.Host == "" && d.Vendor == "":
		status = "it is unmanaged (a topology node, not polled)"
	case d.LastPoll == 0:
		status = "it was never polled"
	case d.LastError != "":
		status = "its last poll failed"
	case now-d.LastPoll > 3*int64(max(d.PollSeconds, 1)):
		status = "it was not polled within 3 poll intervals"
	}
	via := "SNMP " + word(d.SNMPVersion)
	if d.Vendor != "" {
		via = "the firewall REST API"
	}
	l.add("device:status", pDevStatus, fmt.Sprintf("Device %d, polled by %s every %d s: %s; last poll %s.", d.ID, via, d.PollSeconds, status, ts(d.LastPoll)),
		l.host("device", d.Name), val("kind", d.Kind), l.site(d.Site), val("address", d.Host), l.host("sys_name", d.SysName), val("sys_descr", d.SysDescr),
		val("vendor", d.Vendor), val("api_version", d.APIVersion), val("vdom", d.VDOM), val("last_error", d.LastError))

	if err := b.alerts(ctx, l, "device:alerts", store.OpenAlertQuery{DeviceID: d.ID, Site: site}, pDevAlerts, pDevOpenAlert, nil); err != nil {
		return err
	}
	from := now - deviceLookback
	ifs, err := b.d.Devices.DeviceIfaces(ctx, d.ID, from)
	if err != nil {
		return err
	}
	b.deviceIfaces(l, d, ifs)
	res, err := b.d.Devices.DeviceResources(ctx, d.ID, now-hour)
	if err != nil {
		return err
	}
	if len(res) > 0 {
		last := res[len(res)-1]
		var peakCPU, peakMem *float64
		for _, r := range res {
			peakCPU, peakMem = maxPtr(peakCPU, r.CPUPct), maxPtr(peakMem, r.MemPct)
		}
		sessions := "unknown"
		if last.Sessions != nil {
			sessions = strconv.FormatInt(*last.Sessions, 10)
		}
		l.add("device:resources", pDevResources, fmt.Sprintf("Resources of device %d at %s: CPU %s, memory %s, disk %s, %s sessions; over the last hour (%d samples) peak CPU %s, peak memory %s.",
			d.ID, ts(last.TS), optPct(last.CPUPct), optPct(last.MemPct), optPct(last.DiskPct), sessions, len(res), optPct(peakCPU), optPct(peakMem)))
	}
	vpn, err := b.d.Devices.DeviceVPN(ctx, d.ID, from)
	if err != nil {
		return err
	}
	b.deviceVPN(l, d, latest(vpn, func(v record.VPNSample) int64 { return v.TS }))
	sdwan, err := b.d.Devices.DeviceSDWAN(ctx, d.ID, from)
	if err != nil {
		return err
	}
	sdwan = latest(sdwan, func(h record.SDWANSample) int64 { return h.TS })
	for i, h := range sdwan[:min(len(sdwan), maxIfaces)] {
		l.add("device:sdwan", prio(pDevSDWAN, i), fmt.Sprintf("SD-WAN health-check member of device %d at %s: latency %.1f ms, jitter %.1f ms, loss %s.",
			d.ID, ts(h.TS), h.LatencyMS, h.JitterMS, pct(h.LossPct)), val("health_check", h.Name), val("member", h.Member), val("status", h.Status), val("vdom", h.VDOM))
	}
	return nil
}

// latest keeps the rows of the newest poll.
func latest[T any](rows []T, at func(T) int64) []T {
	if len(rows) == 0 {
		return rows
	}
	var newest int64
	for _, r := range rows {
		newest = max(newest, at(r))
	}
	out := rows[:0:0]
	for _, r := range rows {
		if at(r) == newest {
			out = append(out, r)
		}
	}
	return out
}

func maxPtr(a, b *float64) *float64 {
	if b == nil || (a != nil && *a >= *b) {
		return a
	}
	return b
}

// deviceIfaces adds a count of the latest poll's interfaces, then each,
// the busiest and the down ones (admin up, oper down) first.
func (b *Builder) deviceIfaces(l *list, d store.Device, ifs []record.IfaceSample) {
	if len(ifs) == 0 {
		l.add("device:interfaces", pDevIfaceSum, fmt.Sprintf("Device %d reported no interfaces in the last 24 hours.", d.ID))
		return
	}
	var up, down, adminDown int
	for _, f := range ifs {
		switch {
		case !f.AdminUp:
			adminDown++
		case f.OperUp:
			up++
		default:
			down++
		}
	}
	l.add("device:interfaces", pDevIfaceSum, fmt.Sprintf("Interfaces of device %d in its poll of %s: %d in all, %d up, %d down although enabled, %d disabled.",
		d.ID, ts(ifs[0].TS), len(ifs), up, down, adminDown))
	util := func(f record.IfaceSample) float64 {
		u := -1.0
		for _, p := range []*float64{f.RxUtilPct, f.TxUtilPct} {
			if p != nil {
				u = max(u, *p)
			}
		}
		return u
	}
	rank := func(f record.IfaceSample) int {
		switch {
		case f.AdminUp && !f.OperUp:
			return 1 // down although enabled: next after the utilised
		case util(f) >= 0:
			return 0
		case f.OperUp:
			return 2
		}
		return 3
	}
	sorted := slices.Clone(ifs)
	slices.SortStableFunc(sorted, func(x, y record.IfaceSample) int {
		return cmp.Or(cmp.Compare(rank(x), rank(y)), cmp.Compare(util(y), util(x)), cmp.Compare(y.RxBps+y.TxBps, x.RxBps+x.TxBps), cmp.Compare(x.IfIndex, y.IfIndex))
	})
	for i, f := range sorted[:min(len(sorted), maxIfaces)] {
		state := operText(f.OperUp)
		if !f.AdminUp {
			state = "admin down"
		}
		l.add("device:interfaces", prio(pDevIfaces, i), fmt.Sprintf("Interface ifIndex %d of device %d (class %s): %s, rx %s, tx %s utilisation, %s in, %s out, speed %s, errors %d in / %d out, discards %d in / %d out (since the counters started).",
			f.IfIndex, d.ID, word(f.Class), state, optPct(f.RxUtilPct), optPct(f.TxUtilPct), bitsText(f.RxBps*8), bitsText(f.TxBps*8), bitsText(float64(f.SpeedBps)),
			f.InErrors, f.OutErrors, f.InDiscards, f.OutDiscards), val("interface", f.Name), val("alias", f.Alias))
	}
}

// deviceVPN adds the latest poll's IPsec tunnels (down first) and a count
// of the SSL VPN users with their names (registered as user names).
func (b *Builder) deviceVPN(l *list, d store.Device, vpn []record.VPNSample) {
	var tunnels, users []record.VPNSample
	for _, v := range vpn {
		if v.Kind == "ssl" {
			users = append(users, v)
			l.ps.AddUser(v.Name)
		} else {
			tunnels = append(tunnels, v)
		}
	}
	if len(vpn) == 0 {
		return
	}
	var downN int
	for _, t := range tunnels {
		if t.Status != "up" {
			downN++
		}
	}
	l.add("device:vpn", pDevVPN, fmt.Sprintf("VPN of device %d at %s: %d IPsec tunnels, %d down; %d SSL VPN users connected.", d.ID, ts(vpn[0].TS), len(tunnels), downN, len(users)))
	slices.SortStableFunc(tunnels, func(x, y record.VPNSample) int {
		return cmp.Compare(boolInt(x.Status == "up"), boolInt(y.Status == "up"))
	})
	for i, t := range tunnels[:min(len(tunnels), maxIfaces)] {
		state := "down"
		if t.Status == "up" {
			state = "up"
		}
		l.add("device:vpn", prio(pDevVPN-1, i), fmt.Sprintf("IPsec tunnel of device %d: %s, up for %d s, %s in, %s out.", d.ID, state, t.UptimeSec, bytesText(float64(t.InBytes)), bytesText(float64(t.OutBytes))),
			val("tunnel", t.Name), val("gateway", t.Remote), val("vdom", t.VDOM))
	}
	for i, u := range users[:min(len(users), maxIfaces)] {
		l.add("device:vpn_users", prio(pDevVPN-10, i), fmt.Sprintf("SSL VPN user of device %d: connected for %d s, %s in, %s out.", d.ID, u.UptimeSec, bytesText(float64(u.InBytes)), bytesText(float64(u.OutBytes))),
			l.user("user", u.Name), val("address", u.Remote), val("vdom", u.VDOM))
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
