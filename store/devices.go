package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"netmon/store/record"
)

// Network devices (spec 2.11) and their samples. The caller seals the
// credentials (Device.Secrets is the vault blob, associated data
// "devices/<id>"), so InsertDevice and SetDeviceSecrets are two steps of
// one transaction: the id is known only after the insert.

// DeviceTables are the raw time series of devices, for the retention loop.
var DeviceTables = []string{"device_ifaces", "device_resources", "device_vpn", "device_sdwan", "device_policies"}

// Device is a stored device: the list item of spec 2.11 plus what the
// pollers need. Secrets is the sealed credential blob (nil: none).
type Device struct {
	ID           int64
	Name         string
	Host         string
	Kind         string
	Site         string
	SNMPVersion  string
	V3User       string
	V3AuthProto  string
	V3PrivProto  string
	Secrets      []byte
	Vendor       string
	APIURL       string
	APIVerifyTLS bool
	VDOM         string
	Profile      string
	APIProfile   string
	APIVersion   string
	APICaps      string
	PollSeconds  int
	Enabled      bool
	SysName      string
	SysDescr     string
	SysObjectID  string
	LastPoll     int64
	LastError    string
	CreatedAt    int64
}

const deviceColumns = `id, name, host, kind, site, snmp_version, v3_user, v3_auth_proto, v3_priv_proto, secrets, vendor, api_url,
	api_verify_tls, vdom, profile, api_profile, api_version, api_caps, poll_seconds, enabled, sys_name, sys_descr, sys_object_id,
	last_poll, last_error, created_at`

func scanDevice(r rowScanner) (Device, error) {
	var d Device
	err := r.Scan(&d.ID, &d.Name, &d.Host, &d.Kind, &d.Site, &d.SNMPVersion, &d.V3User, &d.V3AuthProto, &d.V3PrivProto, &d.Secrets,
		&d.Vendor, &d.APIURL, &d.APIVerifyTLS, &d.VDOM, &d.Profile, &d.APIProfile, &d.APIVersion, &d.APICaps, &d.PollSeconds,
		&d.Enabled, &d.SysName, &d.SysDescr, &d.SysObjectID, &d.LastPoll, &d.LastError, &d.CreatedAt)
	return d, err
}

// InsertDevice stores a new device (without its secrets) inside t and
// returns its id.
func (t *Tx) InsertDevice(ctx context.Context, d Device) (int64, error) {
	const q = `INSERT INTO devices (name, host, kind, site, snmp_version, v3_user, v3_auth_proto, v3_priv_proto, vendor, api_url,
		api_verify_tls, vdom, profile, poll_seconds, enabled, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) RETURNING id`
	var id int64
	err := t.tx.QueryRowContext(ctx, q, cleanText(d.Name), d.Host, d.Kind, d.Site, d.SNMPVersion, cleanText(d.V3User), d.V3AuthProto,
		d.V3PrivProto, d.Vendor, d.APIURL, d.APIVerifyTLS, d.VDOM, d.Profile, d.PollSeconds, d.Enabled, d.CreatedAt).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("insert device: %w", err)
	}
	return id, nil
}

// SetDeviceSecrets replaces a device's sealed credentials inside t.
func (t *Tx) SetDeviceSecrets(ctx context.Context, id int64, blob []byte) error {
	if _, err := t.tx.ExecContext(ctx, `UPDATE devices SET secrets = $1 WHERE id = $2`, blob, id); err != nil {
		return fmt.Errorf("set device %d secrets: %w", id, err)
	}
	return nil
}

// DeleteDevice deletes a device, its samples and its topology edges
// inside t; an error wrapping ErrNotFound when there is no such device.
func (t *Tx) DeleteDevice(ctx context.Context, id int64) error {
	for _, q := range []string{
		`DELETE FROM device_ifaces WHERE device_id = $1`,
		`DELETE FROM device_resources WHERE device_id = $1`,
		`DELETE FROM device_vpn WHERE device_id = $1`,
		`DELETE FROM device_sdwan WHERE device_id = $1`,
		`DELETE FROM device_policies WHERE device_id = $1`,
		`DELETE FROM topology_edges WHERE (a_kind = 'device' AND a_id = $1) OR (b_kind = 'device' AND b_id = $1)`,
	} {
		if _, err := t.tx.ExecContext(ctx, q, id); err != nil {
			return fmt.Errorf("delete device %d: %w", id, err)
		}
	}
	res, err := t.tx.ExecContext(ctx, `DELETE FROM devices WHERE id = $1`, id)
	if err != nil {
		return fmt.Errorf("delete device %d: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("delete device %d: %w", id, err)
	} else if n == 0 {
		return fmt.Errorf("delete device %d: %w", id, ErrNotFound)
	}
	return nil
}

// Devices lists devices by id; site "" lists every site's.
func (db *DB) Devices(ctx context.Context, site string) ([]Device, error) {
	q := `SELECT ` + deviceColumns + ` FROM devices`
	var args []any
	if site != "" {
		q += ` WHERE site = $1`
		args = append(args, site)
	}
	rows, err := db.reader.QueryContext(ctx, q+` ORDER BY id`, args...)
	if err != nil {
		return nil, fmt.Errorf("list devices: %w", err)
	}
	defer rows.Close()
	out := []Device{}
	for rows.Next() {
		d, err := scanDevice(rows)
		if err != nil {
			return nil, fmt.Errorf("list devices: %w", err)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list devices: %w", err)
	}
	return out, nil
}

// Device returns one device, or an error wrapping ErrNotFound.
func (db *DB) Device(ctx context.Context, id int64) (Device, error) {
	d, err := scanDevice(db.reader.QueryRowContext(ctx, `SELECT `+deviceColumns+` FROM devices WHERE id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return d, fmt.Errorf("device %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return d, fmt.Errorf("device %d: %w", id, err)
	}
	return d, nil
}

// SaveDevicePoll records one poll: the device's status (last_poll,
// last_error, and on success its system group), its interface and
// resource samples and the neighbours it reported (edges upserted, ts =
// p.TS). A device deleted meanwhile is left deleted: nothing is written.
func (db *DB) SaveDevicePoll(ctx context.Context, p record.DevicePoll) error {
	err := db.InTx(ctx, func(t *Tx) error {
		var res sql.Result
		var err error
		if p.Err != "" {
			res, err = t.tx.ExecContext(ctx, `UPDATE devices SET last_poll = $1, last_error = $2 WHERE id = $3`, p.TS, cleanText(p.Err), p.DeviceID)
		} else {
			res, err = t.tx.ExecContext(ctx, `UPDATE devices SET last_poll = $1, last_error = '', sys_name = $2, sys_descr = $3, sys_object_id = $4 WHERE id = $5`,
				p.TS, cleanText(p.SysName), cleanText(p.SysDescr), p.SysObject, p.DeviceID)
		}
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return err // deleted meanwhile: write no samples for it
		}
		if err := countPoll(ctx, t.tx, p); err != nil {
			return err
		}
		if err := insertIfaces(ctx, t.tx, p.DeviceID, p.TS, p.Ifaces); err != nil {
			return err
		}
		if r := p.Resources; r != nil {
			if _, err := t.tx.ExecContext(ctx, `INSERT INTO device_resources (device_id, ts, cpu_pct, mem_pct, disk_pct, sessions) VALUES ($1, $2, $3, $4, $5, $6)`,
				p.DeviceID, p.TS, r.CPUPct, r.MemPct, r.DiskPct, r.Sessions); err != nil {
				return err
			}
		}
		if err := saveNeighbors(ctx, t.tx, p); err != nil {
			return err
		}
		return saveFirewall(ctx, t.tx, p)
	})
	if err != nil {
		return fmt.Errorf("save device %d poll: %w", p.DeviceID, err)
	}
	return nil
}

// saveNeighbors upserts the edges a poll reported and writes the state
// of the device's ports into every edge of the device (utilisation of
// the busier direction, oper-down): the topology's link status.
func saveNeighbors(ctx context.Context, tx *sql.Tx, p record.DevicePoll) error {
	type portState struct {
		util *float64
		down bool
	}
	ports := make(map[string]portState, len(p.Ifaces))
	for _, f := range p.Ifaces {
		st := portState{down: !f.OperUp}
		for _, u := range []*float64{f.RxUtilPct, f.TxUtilPct} {
			if u != nil && (st.util == nil || *u > *st.util) {
				st.util = u
			}
		}
		ports[f.Name] = st
	}
	for _, n := range p.Neighbors {
		const q = `INSERT INTO topology_edges (a_kind, a_id, a_port, b_kind, b_id, b_name, b_port, b_addr, source, ts, util_pct, port_down)
			VALUES ('device', $1, $2, 'neighbor', 0, $3, $4, $5, $6, $7, $8, $9)
			ON CONFLICT (a_kind, a_id, a_port, b_kind, b_id, b_name, b_port, source) DO UPDATE SET ts = excluded.ts, b_addr = excluded.b_addr`
		name := n.RemoteName
		if name == "" {
			name = n.RemoteAddr
		}
		st := ports[n.LocalPort]
		if _, err := tx.ExecContext(ctx, q, p.DeviceID, cleanText(n.LocalPort), cleanText(name), cleanText(n.RemotePort), n.RemoteAddr, n.Source, p.TS, st.util, st.down); err != nil {
			return err
		}
	}
	if len(p.Ifaces) == 0 {
		return nil
	}
	rows, err := tx.QueryContext(ctx, `SELECT DISTINCT a_port FROM topology_edges WHERE a_kind = 'device' AND a_id = $1`, p.DeviceID)
	if err != nil {
		return err
	}
	var edgePorts []string
	for rows.Next() {
		var port string
		if err := rows.Scan(&port); err != nil {
			rows.Close()
			return err
		}
		edgePorts = append(edgePorts, port)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, port := range edgePorts {
		st, ok := ports[port]
		if !ok {
			continue
		}
		if _, err := tx.ExecContext(ctx, `UPDATE topology_edges SET util_pct = $1, port_down = $2 WHERE a_kind = 'device' AND a_id = $3 AND a_port = $4`,
			st.util, st.down, p.DeviceID, port); err != nil {
			return err
		}
	}
	return nil
}

// ifaceCols is the column count of a device_ifaces row.
const ifaceCols = 19

// insertIfaces writes a poll's interfaces in multi-row INSERTs (48
// interfaces are one statement on either engine).
func insertIfaces(ctx context.Context, tx *sql.Tx, dev, ts int64, ifs []record.IfaceSample) error {
	const head = `INSERT INTO device_ifaces (device_id, ts, if_index, name, alias, class, speed_bps, admin_up, oper_up, in_octets, out_octets,
		in_errors, out_errors, in_discards, out_discards, rx_bps, tx_bps, rx_util_pct, tx_util_pct) VALUES `
	const batch = 50 // 950 parameters: under SQLite's and PostgreSQL's limits
	for start := 0; start < len(ifs); start += batch {
		part := ifs[start:min(start+batch, len(ifs))]
		var sb strings.Builder
		sb.WriteString(head)
		args := make([]any, 0, len(part)*ifaceCols)
		for i, f := range part {
			if i > 0 {
				sb.WriteByte(',')
			}
			sb.WriteByte('(')
			for c := range ifaceCols {
				if c > 0 {
					sb.WriteByte(',')
				}
				fmt.Fprintf(&sb, "$%d", i*ifaceCols+c+1)
			}
			sb.WriteByte(')')
			args = append(args, dev, ts, f.IfIndex, cleanText(f.Name), cleanText(f.Alias), f.Class, int64(f.SpeedBps), f.AdminUp, f.OperUp,
				int64(f.InOctets), int64(f.OutOctets), int64(f.InErrors), int64(f.OutErrors), int64(f.InDiscards), int64(f.OutDiscards),
				f.RxBps, f.TxBps, f.RxUtilPct, f.TxUtilPct)
		}
		if _, err := tx.ExecContext(ctx, sb.String(), args...); err != nil {
			return err
		}
	}
	return nil
}

// DeviceIfaces returns the interfaces of a device's latest poll at or
// after from, by ifIndex; empty when there is none.
func (db *DB) DeviceIfaces(ctx context.Context, id, from int64) ([]record.IfaceSample, error) {
	const q = `SELECT ts, if_index, name, alias, class, speed_bps, admin_up, oper_up, in_octets, out_octets, in_errors, out_errors,
		in_discards, out_discards, rx_bps, tx_bps, rx_util_pct, tx_util_pct FROM device_ifaces
		WHERE device_id = $1 AND ts = (SELECT MAX(ts) FROM device_ifaces WHERE device_id = $1 AND ts >= $2) ORDER BY if_index`
	rows, err := db.reader.QueryContext(ctx, q, id, from)
	if err != nil {
		return nil, fmt.Errorf("device %d interfaces: %w", id, err)
	}
	defer rows.Close()
	out := []record.IfaceSample{}
	for rows.Next() {
		var f record.IfaceSample
		var speed, in, outo, ie, oe, id2, od int64
		if err := rows.Scan(&f.TS, &f.IfIndex, &f.Name, &f.Alias, &f.Class, &speed, &f.AdminUp, &f.OperUp, &in, &outo, &ie, &oe, &id2, &od,
			&f.RxBps, &f.TxBps, &f.RxUtilPct, &f.TxUtilPct); err != nil {
			return nil, fmt.Errorf("device %d interfaces: %w", id, err)
		}
		f.DeviceID = id
		f.SpeedBps, f.InOctets, f.OutOctets, f.InErrors, f.OutErrors, f.InDiscards, f.OutDiscards =
			uint64(speed), uint64(in), uint64(outo), uint64(ie), uint64(oe), uint64(id2), uint64(od)
		out = append(out, f)
	}
	return out, rows.Err()
}

// DeviceResources returns a device's resource samples since from, oldest
// first.
func (db *DB) DeviceResources(ctx context.Context, id, from int64) ([]record.ResourceSample, error) {
	rows, err := db.reader.QueryContext(ctx, `SELECT ts, cpu_pct, mem_pct, disk_pct, sessions FROM device_resources
		WHERE device_id = $1 AND ts >= $2 ORDER BY ts`, id, from)
	if err != nil {
		return nil, fmt.Errorf("device %d resources: %w", id, err)
	}
	defer rows.Close()
	out := []record.ResourceSample{}
	for rows.Next() {
		r := record.ResourceSample{DeviceID: id}
		if err := rows.Scan(&r.TS, &r.CPUPct, &r.MemPct, &r.DiskPct, &r.Sessions); err != nil {
			return nil, fmt.Errorf("device %d resources: %w", id, err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// DeviceSampleCounts counts a device's interface and resource rows (for
// tests and the delete check).
func (db *DB) DeviceSampleCounts(ctx context.Context, id int64) (ifaces, resources int64, err error) {
	err = db.reader.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM device_ifaces WHERE device_id = $1), (SELECT COUNT(*) FROM device_resources WHERE device_id = $1)`, id).
		Scan(&ifaces, &resources)
	return ifaces, resources, err
}

// IfaceRate is one poll of one interface: its rates and utilisation.
type IfaceRate struct {
	TS        int64    `json:"ts"`
	OperUp    bool     `json:"oper_up"`
	RxBps     float64  `json:"rx_bps"`
	TxBps     float64  `json:"tx_bps"`
	RxUtilPct *float64 `json:"rx_util_pct"`
	TxUtilPct *float64 `json:"tx_util_pct"`
}

// IfaceHistoryMax bounds one interface's history answer: 7 days of 60 s
// polls fit; at faster polls the newest are kept (the chart's right end).
const IfaceHistoryMax = 10080

// DeviceIfaceHistory returns one interface's polls since from, oldest
// first, at most IfaceHistoryMax (the newest).
func (db *DB) DeviceIfaceHistory(ctx context.Context, id, ifIndex, from int64) ([]IfaceRate, error) {
	rows, err := db.reader.QueryContext(ctx, `SELECT ts, oper_up, rx_bps, tx_bps, rx_util_pct, tx_util_pct FROM device_ifaces
		WHERE device_id = $1 AND if_index = $2 AND ts >= $3 ORDER BY ts DESC LIMIT $4`, id, ifIndex, from, IfaceHistoryMax)
	if err != nil {
		return nil, fmt.Errorf("device %d interface %d history: %w", id, ifIndex, err)
	}
	defer rows.Close()
	out := []IfaceRate{}
	for rows.Next() {
		var r IfaceRate
		if err := rows.Scan(&r.TS, &r.OperUp, &r.RxBps, &r.TxBps, &r.RxUtilPct, &r.TxUtilPct); err != nil {
			return nil, fmt.Errorf("device %d interface %d history: %w", id, ifIndex, err)
		}
		out = append(out, r)
	}
	slices.Reverse(out)
	return out, rows.Err()
}
