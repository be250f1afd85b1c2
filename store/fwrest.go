package store

import (
	"context"
	"database/sql"
	"fmt"
	"sort"

	"netmon/store/record"
)

// The firewall REST driver's series (migration 0019_fwrest): VPN
// tunnels and SSL users, SD-WAN health checks and policy counters, one
// row per item and poll, pruned by the retention loop (DeviceTables).

// saveFirewall writes the REST part of a successful poll inside the
// poll's transaction, and the device's api_profile/version/caps.
func saveFirewall(ctx context.Context, tx *sql.Tx, p record.DevicePoll) error {
	f := p.Firewall
	if f == nil {
		return nil
	}
	if _, err := tx.ExecContext(ctx, `UPDATE devices SET api_profile = $1, api_version = $2, api_caps = $3 WHERE id = $4`,
		f.Profile, cleanText(f.Version), f.Caps, p.DeviceID); err != nil {
		return err
	}
	for _, v := range f.VPN {
		if _, err := tx.ExecContext(ctx, `INSERT INTO device_vpn (device_id, ts, kind, vdom, name, remote, status, uptime_sec, in_bytes, out_bytes)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
			p.DeviceID, p.TS, v.Kind, cleanText(v.VDOM), cleanText(v.Name), cleanText(v.Remote), v.Status, v.UptimeSec, clampInt(v.InBytes), clampInt(v.OutBytes)); err != nil {
			return err
		}
	}
	for _, h := range f.SDWAN {
		if _, err := tx.ExecContext(ctx, `INSERT INTO device_sdwan (device_id, ts, vdom, name, member, status, latency_ms, jitter_ms, loss_pct)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
			p.DeviceID, p.TS, cleanText(h.VDOM), cleanText(h.Name), cleanText(h.Member), cleanText(h.Status), h.LatencyMS, h.JitterMS, h.LossPct); err != nil {
			return err
		}
	}
	for _, pol := range f.Policies {
		if _, err := tx.ExecContext(ctx, `INSERT INTO device_policies (device_id, ts, vdom, policy_id, hit_count, bytes, packets, active_sessions)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
			p.DeviceID, p.TS, cleanText(pol.VDOM), pol.PolicyID, clampInt(pol.HitCount), clampInt(pol.Bytes), clampInt(pol.Packets), clampInt(pol.ActiveSessions)); err != nil {
			return err
		}
	}
	return nil
}

// clampInt stores a device counter in a signed BIGINT column (a counter
// past 2^63 is pinned, not wrapped negative).
func clampInt(v uint64) int64 {
	if v > 1<<63-1 {
		return 1<<63 - 1
	}
	return int64(v)
}

// DeviceVPN returns a device's VPN rows since from, by poll then kind
// and name.
func (db *DB) DeviceVPN(ctx context.Context, id, from int64) ([]record.VPNSample, error) {
	rows, err := db.reader.QueryContext(ctx, `SELECT ts, kind, vdom, name, remote, status, uptime_sec, in_bytes, out_bytes FROM device_vpn
		WHERE device_id = $1 AND ts >= $2 ORDER BY ts, kind, vdom, name, remote`, id, from)
	if err != nil {
		return nil, fmt.Errorf("device %d vpn: %w", id, err)
	}
	defer rows.Close()
	out := []record.VPNSample{}
	for rows.Next() {
		var v record.VPNSample
		var in, outb int64
		if err := rows.Scan(&v.TS, &v.Kind, &v.VDOM, &v.Name, &v.Remote, &v.Status, &v.UptimeSec, &in, &outb); err != nil {
			return nil, fmt.Errorf("device %d vpn: %w", id, err)
		}
		v.InBytes, v.OutBytes = uint64(in), uint64(outb)
		out = append(out, v)
	}
	return out, rows.Err()
}

// DeviceSDWAN returns a device's SD-WAN health-check rows since from.
func (db *DB) DeviceSDWAN(ctx context.Context, id, from int64) ([]record.SDWANSample, error) {
	rows, err := db.reader.QueryContext(ctx, `SELECT ts, vdom, name, member, status, latency_ms, jitter_ms, loss_pct FROM device_sdwan
		WHERE device_id = $1 AND ts >= $2 ORDER BY ts, vdom, name, member`, id, from)
	if err != nil {
		return nil, fmt.Errorf("device %d sdwan: %w", id, err)
	}
	defer rows.Close()
	out := []record.SDWANSample{}
	for rows.Next() {
		var h record.SDWANSample
		if err := rows.Scan(&h.TS, &h.VDOM, &h.Name, &h.Member, &h.Status, &h.LatencyMS, &h.JitterMS, &h.LossPct); err != nil {
			return nil, fmt.Errorf("device %d sdwan: %w", id, err)
		}
		out = append(out, h)
	}
	return out, rows.Err()
}

// DevicePolicies returns each policy's activity since from, the most
// hits first (then policy id): spec 4.8 "most active policy hit deltas".
func (db *DB) DevicePolicies(ctx context.Context, id, from int64) ([]record.PolicyDelta, error) {
	rows, err := db.reader.QueryContext(ctx, `SELECT ts, vdom, policy_id, hit_count, bytes, packets, active_sessions FROM device_policies
		WHERE device_id = $1 AND ts >= $2 ORDER BY vdom, policy_id, ts`, id, from)
	if err != nil {
		return nil, fmt.Errorf("device %d policies: %w", id, err)
	}
	defer rows.Close()
	type key struct {
		vdom string
		id   int64
	}
	type acc struct {
		d    record.PolicyDelta
		last [3]uint64
	}
	byKey := map[key]*acc{}
	var order []key
	for rows.Next() {
		var ts, pid, hits, bytes, pkts, act int64
		var vdom string
		if err := rows.Scan(&ts, &vdom, &pid, &hits, &bytes, &pkts, &act); err != nil {
			return nil, fmt.Errorf("device %d policies: %w", id, err)
		}
		cur := [3]uint64{uint64(hits), uint64(bytes), uint64(pkts)}
		k := key{vdom, pid}
		a := byKey[k]
		if a == nil {
			a = &acc{d: record.PolicyDelta{VDOM: vdom, PolicyID: pid}, last: cur}
			byKey[k] = a
			order = append(order, k)
		} else {
			grow := func(prev, now uint64) uint64 {
				if now < prev {
					return now // the counters were reset: count from zero
				}
				return now - prev
			}
			a.d.Hits += grow(a.last[0], cur[0])
			a.d.Bytes += grow(a.last[1], cur[1])
			a.d.Packets += grow(a.last[2], cur[2])
			a.last = cur
		}
		a.d.ActiveSessions, a.d.HitCount, a.d.LastTS = uint64(act), cur[0], ts
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("device %d policies: %w", id, err)
	}
	out := make([]record.PolicyDelta, 0, len(order))
	for _, k := range order {
		out = append(out, byKey[k].d)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Hits != out[j].Hits {
			return out[i].Hits > out[j].Hits
		}
		if out[i].VDOM != out[j].VDOM {
			return out[i].VDOM < out[j].VDOM
		}
		return out[i].PolicyID < out[j].PolicyID
	})
	return out, nil
}
