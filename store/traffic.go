package store

import (
	"context"
	"fmt"

	"netmon/store/record"
)

// TrafficMinute is one minute of the hub's capture (the capture hands it
// over as is: the type lives in store/record).
type TrafficMinute = record.TrafficMinute

// TrafficTables are the raw time-series tables of this file, for the
// retention loop.
var TrafficTables = []string{"traffic_minutes", "remote_minutes"}

// AddTrafficMinute adds m to its minute: a capture restarted within a
// minute, or several hubs sharing a database, add up instead of
// overwriting each other.
func (db *DB) AddTrafficMinute(ctx context.Context, m TrafficMinute) error {
	const q = `INSERT INTO traffic_minutes (ts, in_bytes, out_bytes, local_bytes, packets, peak_in, peak_out, seconds, dropped)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (ts) DO UPDATE SET
			in_bytes = traffic_minutes.in_bytes + excluded.in_bytes,
			out_bytes = traffic_minutes.out_bytes + excluded.out_bytes,
			local_bytes = traffic_minutes.local_bytes + excluded.local_bytes,
			packets = traffic_minutes.packets + excluded.packets,
			dropped = traffic_minutes.dropped + excluded.dropped,
			peak_in = CASE WHEN excluded.peak_in > traffic_minutes.peak_in THEN excluded.peak_in ELSE traffic_minutes.peak_in END,
			peak_out = CASE WHEN excluded.peak_out > traffic_minutes.peak_out THEN excluded.peak_out ELSE traffic_minutes.peak_out END,
			seconds = CASE WHEN traffic_minutes.seconds + excluded.seconds > 60 THEN 60 ELSE traffic_minutes.seconds + excluded.seconds END`
	if _, err := db.exec(ctx, q, m.TS, m.InBytes, m.OutBytes, m.LocalBytes, m.Packets, m.PeakIn, m.PeakOut, m.Seconds, m.Dropped); err != nil {
		return fmt.Errorf("add traffic minute %d: %w", m.TS, err)
	}
	return nil
}

// TrafficMinutes returns the minutes with from <= ts < to, oldest first.
func (db *DB) TrafficMinutes(ctx context.Context, from, to int64) ([]TrafficMinute, error) {
	const q = `SELECT ts, in_bytes, out_bytes, local_bytes, packets, peak_in, peak_out, seconds, dropped
		FROM traffic_minutes WHERE ts >= $1 AND ts < $2 ORDER BY ts`
	rows, err := db.reader.QueryContext(ctx, q, from, to)
	if err != nil {
		return nil, fmt.Errorf("read traffic minutes: %w", err)
	}
	defer rows.Close()
	out := []TrafficMinute{}
	for rows.Next() {
		var m TrafficMinute
		if err := rows.Scan(&m.TS, &m.InBytes, &m.OutBytes, &m.LocalBytes, &m.Packets, &m.PeakIn, &m.PeakOut, &m.Seconds, &m.Dropped); err != nil {
			return nil, fmt.Errorf("read traffic minutes: %w", err)
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// RemoteBytes is the traffic exchanged with one remote address in a
// minute (record.RemoteTraffic, as the capture hands it over).
type RemoteBytes = record.RemoteTraffic

// AddRemoteMinute adds the per-address bytes of minute ts in one
// transaction.
func (db *DB) AddRemoteMinute(ctx context.Context, ts int64, rs []RemoteBytes) error {
	if len(rs) == 0 {
		return nil
	}
	return db.InTx(ctx, func(wtx *Tx) error {
		tx := wtx.SQL()
		const q = `INSERT INTO remote_minutes (ts, ip, country, bytes) VALUES ($1, $2, $3, $4)
			ON CONFLICT (ts, ip) DO UPDATE SET bytes = remote_minutes.bytes + excluded.bytes, country = excluded.country`
		stmt, err := tx.PrepareContext(ctx, q)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for _, r := range rs {
			if _, err := stmt.ExecContext(ctx, ts, r.IP.String(), r.Country, r.Bytes); err != nil {
				return fmt.Errorf("add remote minute %d: %w", ts, err)
			}
		}
		return nil
	})
}

// CountryTraffic is the traffic of one country over a window.
type CountryTraffic struct {
	Country string
	Bytes   int64
	// Sessions is the number of distinct remote addresses.
	Sessions int64
}

// TrafficByCountry sums remote traffic per country since from, bytes
// descending; addresses of unknown country are left out.
func (db *DB) TrafficByCountry(ctx context.Context, from int64) ([]CountryTraffic, error) {
	const q = `SELECT country, SUM(bytes), COUNT(DISTINCT ip) FROM remote_minutes
		WHERE ts >= $1 AND country <> '' GROUP BY country ORDER BY SUM(bytes) DESC, country`
	rows, err := db.reader.QueryContext(ctx, q, from)
	if err != nil {
		return nil, fmt.Errorf("traffic by country: %w", err)
	}
	defer rows.Close()
	out := []CountryTraffic{}
	for rows.Next() {
		var c CountryTraffic
		if err := rows.Scan(&c.Country, &c.Bytes, &c.Sessions); err != nil {
			return nil, fmt.Errorf("traffic by country: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// Size is the database's size on disk in bytes (history's db_bytes).
func (db *DB) Size(ctx context.Context) (int64, error) {
	var n int64
	var err error
	if db.dialect == Postgres {
		err = db.reader.QueryRowContext(ctx, `SELECT pg_database_size(current_database())`).Scan(&n)
	} else {
		err = db.reader.QueryRowContext(ctx, `SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()`).Scan(&n)
	}
	if err != nil {
		return 0, fmt.Errorf("database size: %w", err)
	}
	return n, nil
}
