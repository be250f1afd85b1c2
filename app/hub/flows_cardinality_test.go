package hub

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"netmon/app/config"
	"netmon/collectors/flows/replay"
	"netmon/store/flowagg"
	"netmon/store/storetest"
)

// exportTotals is one datagram's flows as tshark decodes them, by
// (minute, protocol): an oracle independent of netmon's decoder.
type exportTotals map[replay.TruthKey]replay.Totals

// tsharkTruth decodes a NetFlow v9 export pcap (UDP to port) with tshark
// and returns each frame's totals, in order. A flow's minute is its end
// time: the header's export time less how long before the export (by the
// uptime clock) the flow ended, as the v9 header defines it.
func tsharkTruth(t *testing.T, tshark, pcap string, port int) []exportTotals {
	t.Helper()
	out, err := exec.Command(tshark, "-r", pcap, "-d", fmt.Sprintf("udp.port==%d,cflow", port), "-T", "fields",
		"-e", "cflow.unix_secs", "-e", "cflow.sysuptime", "-e", "cflow.timeend", "-e", "cflow.protocol", "-e", "cflow.packets", "-e", "cflow.octets",
		"-E", "occurrence=a", "-E", "aggregator=,").Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	ms := func(s string) uint32 { // "12.345000000" seconds -> ms (mod 2^32)
		sec, frac, _ := strings.Cut(s, ".")
		a, _ := strconv.ParseUint(sec, 10, 64)
		b, _ := strconv.ParseUint((frac + "000")[:3], 10, 64)
		return uint32(a*1000 + b)
	}
	var frames []exportTotals
	for line := range strings.SplitSeq(strings.TrimRight(string(out), "\n"), "\n") {
		f := strings.Split(line, "\t")
		tot := exportTotals{}
		frames = append(frames, tot)
		if len(f) < 6 || f[2] == "" {
			continue // templates only
		}
		export, _ := strconv.ParseInt(f[0], 10, 64)
		uptime := ms(f[1])
		ends, protos, packets, octets := strings.Split(f[2], ","), strings.Split(f[3], ","), strings.Split(f[4], ","), strings.Split(f[5], ",")
		for i := range ends {
			ago := int64(int32(uptime - ms(ends[i])))
			ts := (export*1000 - max(ago, 0)) / 1000
			p, _ := strconv.Atoi(protos[i])
			pk, _ := strconv.ParseInt(packets[i], 10, 64)
			oc, _ := strconv.ParseInt(octets[i], 10, 64)
			k := replay.TruthKey{Minute: ts - ts%60, Proto: uint8(p)}
			v := tot[k]
			v.Packets += pk
			v.Octets += oc
			v.Flows++
			tot[k] = v
		}
	}
	return frames
}

func addTotals(dst exportTotals, frames ...exportTotals) {
	for _, f := range frames {
		for k, v := range f {
			d := dst[k]
			d.Packets += v.Packets
			d.Octets += v.Octets
			d.Flows += v.Flows
			dst[k] = d
		}
	}
}

func (e exportTotals) sum() (s replay.Totals) {
	for _, v := range e {
		s.Packets += v.Packets
		s.Octets += v.Octets
		s.Flows += v.Flows
	}
	return
}

// TestHighCardinalityFlows is issue 16's end-to-end check: a generated
// capture of 100 000 distinct 5-tuples, exported by softflowd -v 9 and
// replayed to the hub, on SQLite and PostgreSQL. The stored exporter,
// protocol and minute totals equal tshark's decoding of the same export;
// each minute keeps its detail budget (the rest in counted other rows);
// the conversation windows (15m, 1h, 6h, 24h) each add up to the truth,
// before and after the hour is rolled up; flows sent again for minutes
// and an hour already written are added to both, never lost.
func TestHighCardinalityFlows(t *testing.T) {
	softflowd, tshark := need(t, "softflowd"), need(t, "tshark")
	dir := t.TempDir()
	const tuples = 100_000
	in := filepath.Join(dir, "in.pcap")
	if _, err := replay.GeneratePcap(in, replay.GenConfig{Tuples: tuples, PacketsPer: 2, Start: time.Now().Add(-10 * time.Minute), Minutes: 3, Payload: 32}); err != nil {
		t.Fatal(err)
	}
	ds, out, err := replay.Softflowd(softflowd, in, "9", dir)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	export := filepath.Join(dir, "export.pcap")
	if err := replay.WriteExport(export, ds, 2055); err != nil {
		t.Fatal(err)
	}
	frames := tsharkTruth(t, tshark, export, 2055)
	if len(frames) != len(ds) {
		t.Fatalf("tshark read %d frames of %d datagrams", len(frames), len(ds))
	}
	truth := exportTotals{}
	addTotals(truth, frames...)
	if s := truth.sum(); s.Flows != tuples || s.Packets != 2*tuples {
		t.Fatalf("softflowd exported %+v, want one flow of 2 packets per 5-tuple", s)
	}
	// Sent again later: the first quarter of the export, for minutes (and
	// then an hour) already written.
	lateN := len(ds) / 4
	late := exportTotals{}
	addTotals(late, frames[:lateN]...)

	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		port := freeUDPPort(t)
		h := startTestHub(t, dsn, func(c *config.HubConfig) { c.Flows.Addr = udpAddr(port) })
		send := func(ds []replay.Datagram) {
			conn, err := net.Dial("udp", fmt.Sprintf("127.0.0.1:%d", port))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if _, err := replay.Send(ctx, conn, ds, 20000, len(ds)); err != nil {
				t.Fatal(err)
			}
		}
		// stored reads flow_minutes or flow_hours by (minute or hour, proto).
		stored := func(table string) exportTotals {
			rows, err := h.db.Reader().QueryContext(ctx, `SELECT ts, proto, SUM(packets), SUM(octets), SUM(flows) FROM `+table+` WHERE exporter = '127.0.0.1' GROUP BY ts, proto`)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			got := exportTotals{}
			for rows.Next() {
				var k replay.TruthKey
				var v replay.Totals
				if err := rows.Scan(&k.Minute, &k.Proto, &v.Packets, &v.Octets, &v.Flows); err != nil {
					t.Fatal(err)
				}
				got[k] = v
			}
			return got
		}
		byHour := func(e exportTotals) exportTotals {
			out := exportTotals{}
			for k, v := range e {
				addTotals(out, exportTotals{{Minute: k.Minute - k.Minute%3600, Proto: k.Proto}: v})
			}
			return out
		}
		windows := func(want replay.Totals) {
			t.Helper()
			c := h.client(t)
			for _, w := range []string{"15m", "1h", "6h", "24h"} {
				for _, by := range []string{"5tuple", "pair"} {
					var rows []struct {
						Packets, Octets, Flows int64
						Truncated              bool
					}
					c.call("GET", "/api/v1/flows/conversations?window="+w+"&by="+by+"&limit=100", nil).must(t, 200).decode(t, &rows)
					var got replay.Totals
					for _, r := range rows {
						got.Packets += r.Packets
						got.Octets += r.Octets
						got.Flows += r.Flows
					}
					if len(rows) == 0 {
						t.Fatalf("window %s by %s: no rows", w, by)
					}
					if got != want || !rows[len(rows)-1].Truncated {
						t.Errorf("window %s by %s: %+v in %d rows (last truncated %v), want %+v", w, by, got, len(rows), rows[len(rows)-1].Truncated, want)
					}
				}
			}
		}

		send(ds)
		settle(t, h)
		waitStored(t, h, truth.sum().Packets)
		if got := stored("flow_minutes"); fmt.Sprint(got) != fmt.Sprint(truth) {
			t.Fatalf("stored minutes:\n%v\nwant (tshark):\n%v", got, truth)
		}
		var minutes, maxRows int64
		if err := h.db.Reader().QueryRowContext(ctx, `SELECT COUNT(DISTINCT ts), MAX(n) FROM (SELECT ts, COUNT(*) AS n FROM flow_minutes GROUP BY ts) AS m`).Scan(&minutes, &maxRows); err != nil {
			t.Fatal(err)
		}
		if budget := int64(flowagg.DefaultConfig().MinuteRows) + 2; maxRows > budget {
			t.Errorf("a minute holds %d rows, more than its budget %d (detail and one other row per protocol)", maxRows, budget)
		}
		t.Logf("%d flows in %d minutes, at most %d rows a minute", truth.sum().Flows, minutes, maxRows)
		windows(truth.sum())

		// Late flows for closed minutes are added.
		send(ds[:lateN])
		settle(t, h)
		want := exportTotals{}
		addTotals(want, truth, late)
		waitStored(t, h, want.sum().Packets)
		if got := stored("flow_minutes"); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("stored minutes after the late flows:\n%v\nwant:\n%v", got, want)
		}
		// Roll the hours up (before their time: minutes still coming are
		// then late for a built hour), send the late part again.
		var last int64
		for k := range want {
			last = max(last, k.Minute)
		}
		if _, err := h.db.BuildFlowHours(ctx, last-last%3600+3600, 2000); err != nil {
			t.Fatal(err)
		}
		if got := stored("flow_hours"); fmt.Sprint(got) != fmt.Sprint(byHour(want)) {
			t.Fatalf("rolled-up hours:\n%v\nwant:\n%v", got, byHour(want))
		}
		send(ds[:lateN])
		addTotals(want, late)
		waitStored(t, h, want.sum().Packets)
		if got := stored("flow_hours"); fmt.Sprint(got) != fmt.Sprint(byHour(want)) {
			t.Fatalf("hours after late flows:\n%v\nwant:\n%v", got, byHour(want))
		}
		windows(want.sum())
		// Conservation: every flow received is written.
		body := h.client(t).call("GET", "/metrics", nil).must(t, 200).body
		line := `netmon_ingest_records_total{kind="flow",result="written"} `
		i := strings.Index(body, line)
		if i < 0 {
			t.Fatal("no written flows metric")
		}
		written, _, _ := strings.Cut(body[i+len(line):], "\n")
		if n, _ := strconv.ParseFloat(written, 64); int64(n) != want.sum().Flows {
			t.Errorf("written %s flows, want %d", written, want.sum().Flows)
		}
	})
}

// settle waits until the collector has received everything sent (its
// received count still for half a second) and the queue has summed it.
func settle(t *testing.T, h *testHub) {
	t.Helper()
	metric := func(name string) string {
		body := h.client(t).call("GET", "/metrics", nil).must(t, 200).body
		var out []string
		for l := range strings.SplitSeq(body, "\n") {
			if strings.HasPrefix(l, name) {
				out = append(out, l)
			}
		}
		return strings.Join(out, ";")
	}
	prev := ""
	for range 100 {
		cur := metric("netmon_flow_records_decoded_total") + metric("netmon_flow_aggregation_records") + metric("netmon_ingest_pending_records")
		if cur == prev {
			return
		}
		prev = cur
		time.Sleep(500 * time.Millisecond)
	}
}
