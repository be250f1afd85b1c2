package snmp

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gosnmp/gosnmp"

	"netmon/store/record"
)

// ifTable and ifXTable columns walked on every poll. The 32-bit octet
// counters are read too: a device without ifXTable (or SNMPv1) has only
// them.
var (
	ifColumns = []string{
		oidIfEntry + "2",  // ifDescr
		oidIfEntry + "3",  // ifType
		oidIfEntry + "5",  // ifSpeed
		oidIfEntry + "7",  // ifAdminStatus
		oidIfEntry + "8",  // ifOperStatus
		oidIfEntry + "10", // ifInOctets
		oidIfEntry + "13", // ifInDiscards
		oidIfEntry + "14", // ifInErrors
		oidIfEntry + "16", // ifOutOctets
		oidIfEntry + "19", // ifOutDiscards
		oidIfEntry + "20", // ifOutErrors
	}
	ifXColumns = []string{
		oidIfXEntry + "1",  // ifName
		oidIfXEntry + "6",  // ifHCInOctets
		oidIfXEntry + "10", // ifHCOutOctets
		oidIfXEntry + "15", // ifHighSpeed (Mbit/s)
		oidIfXEntry + "18", // ifAlias
	}
)

// maxIfRows caps the interfaces read from one device (a chassis with
// thousands of sub-interfaces is cut, not a memory blow-up).
const maxIfRows = 4096

// rawIface is one interface as read, before rates.
type rawIface struct {
	sample record.IfaceSample
	hc     bool // octets are 64-bit (ifXTable)
}

// pollResult is what one poll read.
type pollResult struct {
	poll     record.DevicePoll
	ifaces   []rawIface
	requests int
	varbinds int
	cpu      cpuTicks
}

// fullWalkEvery is how often (in polls) the whole interface tables are
// read again; in between only the columns that move are.
const fullWalkEvery = 10

// ifCache is what a device's last whole walk of the interface tables
// said: names, types, speeds and aliases change rarely, so the polls in
// between read only the state and counter columns (8 instead of 16 a
// row: half the values a device has to send).
type ifCache struct {
	base   []rawIface
	hc     bool // the device has ifXTable's 64-bit counters
	uptime uint32
	age    int
}

// dynamic columns: the moving ones.
var (
	dynColumns = []string{oidIfEntry + "7", oidIfEntry + "8", oidIfEntry + "13", oidIfEntry + "14", oidIfEntry + "19", oidIfEntry + "20"}
	dynHC      = []string{oidIfXEntry + "6", oidIfXEntry + "10"}
	dyn32      = []string{oidIfEntry + "10", oidIfEntry + "16"}
	dynWithHC  = append(slices.Clone(dynColumns), dynHC...)
	dynWith32  = append(slices.Clone(dynColumns), dyn32...)
)

// readIfaces reads the interfaces into r: every column when cache is
// empty, old, or the device rebooted, else only the moving columns over
// the cached rows (and every column after all when the set of
// interfaces changed). cache is updated in place.
func readIfaces(g *gosnmp.GoSNMP, cfg Config, r *pollResult, cache *ifCache) error {
	full := func() error {
		cols, n, err := walkColumns(g, cfg.BulkVarbinds, maxIfRows, append(append([]string{}, ifColumns...), ifXColumns...)...)
		r.requests += n
		if err != nil {
			return err
		}
		r.ifaces = buildIfaces(cols)
		for _, c := range cols {
			r.varbinds += len(c.rows)
		}
		if cache != nil {
			cache.base = slices.Clone(r.ifaces)
			cache.hc = len(cols[len(ifColumns)+1].rows) > 0
			cache.uptime, cache.age = r.poll.UptimeCS, 0
		}
		return nil
	}
	if cache == nil || cache.base == nil || cache.age >= fullWalkEvery-1 || r.poll.UptimeCS < cache.uptime {
		return full()
	}
	oids := dynWith32
	if cache.hc {
		oids = dynWithHC
	}
	cols, n, err := walkColumnsHint(g, cfg.BulkVarbinds, maxIfRows, len(cache.base), oids...)
	r.requests += n
	if err != nil {
		return err
	}
	for _, c := range cols {
		r.varbinds += len(c.rows)
	}
	if len(cols[1].rows) != len(cache.base) {
		return full()
	}
	out := slices.Clone(cache.base)
	for i := range out {
		idx := strconv.Itoa(out[i].sample.IfIndex)
		if _, ok := cols[1].rows[idx]; !ok {
			return full() // an interface came or went
		}
		s := &out[i].sample
		s.AdminUp = num(cols[0].rows[idx]) == 1
		s.OperUp = num(cols[1].rows[idx]) == 1
		s.InDiscards, s.InErrors = num(cols[2].rows[idx]), num(cols[3].rows[idx])
		s.OutDiscards, s.OutErrors = num(cols[4].rows[idx]), num(cols[5].rows[idx])
		s.InOctets, s.OutOctets = num(cols[6].rows[idx]), num(cols[7].rows[idx])
		s.RxBps, s.TxBps, s.RxUtilPct, s.TxUtilPct = 0, 0, nil, nil
	}
	r.ifaces = out
	cache.uptime = r.poll.UptimeCS
	cache.age++
	return nil
}

// sysOIDs are the system group's scalars read on every poll.
var sysOIDs = []string{oidSysDescr, oidSysObjectID, oidSysUpTime, oidSysName}

// pollOnce reads the system group, the interfaces, the host resources
// and (topo) the neighbour tables of one device over g.
func pollOnce(g *gosnmp.GoSNMP, cfg Config, topo bool, cache *ifCache) (pollResult, error) {
	var r pollResult
	// UCD-SNMP's scalars ride in the system group's GET: one round trip a
	// poll fewer. Not in SNMPv1, where one missing OID (no UCD-SNMP) fails
	// the whole GET; an agent refusing the combined GET is asked the
	// system group alone, and readResources asks UCD-SNMP apart.
	ucdAlong := g.Version != gosnmp.Version1
	oids := sysOIDs
	if ucdAlong {
		oids = append(append(slices.Clone(sysOIDs), ucdScalars...), ucdCPURaw...)
	}
	p, err := g.Get(oids)
	r.requests++
	if err == nil && ucdAlong && checkReport(p) == nil && p.Error != gosnmp.NoError {
		ucdAlong = false
		p, err = g.Get(sysOIDs)
		r.requests++
	}
	if err != nil {
		return r, err
	}
	if err := checkReport(p); err != nil {
		return r, err
	}
	var ucd []gosnmp.SnmpPDU
	for _, v := range p.Variables {
		switch v.Name {
		case oidSysDescr:
			r.poll.SysDescr = str(v)
		case oidSysObjectID:
			r.poll.SysObject = str(v)
		case oidSysUpTime:
			r.poll.UptimeCS = uint32(gosnmp.ToBigInt(v.Value).Uint64())
		case oidSysName:
			r.poll.SysName = str(v)
		default:
			ucd = append(ucd, v)
			continue
		}
		r.varbinds++
	}
	if ucdAlong && ucd == nil {
		ucd = []gosnmp.SnmpPDU{} // asked, none came: readResources need not ask
	}
	if err := readIfaces(g, cfg, &r, cache); err != nil {
		return r, fmt.Errorf("interfaces: %w", err)
	}
	res, cpu, n, vb, err := readResources(g, cfg, ucd)
	r.cpu = cpu
	r.requests += n
	r.varbinds += vb
	if err != nil {
		return r, fmt.Errorf("host resources: %w", err)
	}
	r.poll.Resources = res
	if topo {
		nb, n, vb, err := readNeighbors(g, cfg, r.ifaces)
		r.requests += n
		r.varbinds += vb
		if err != nil {
			return r, fmt.Errorf("neighbours: %w", err)
		}
		r.poll.Neighbors = nb
	}
	return r, nil
}

// buildIfaces joins the columns by ifIndex, in ifIndex order.
func buildIfaces(cols []*column) []rawIface {
	byIdx := map[int]*rawIface{}
	var order []int
	get := func(idx string) *rawIface {
		i, err := strconv.Atoi(idx)
		if err != nil {
			return nil
		}
		f := byIdx[i]
		if f == nil {
			f = &rawIface{sample: record.IfaceSample{IfIndex: i, Class: "unknown"}}
			byIdx[i] = f
			order = append(order, i)
		}
		return f
	}
	var ifType = map[int]int{}
	var speed32, speedHigh = map[int]uint64{}, map[int]uint64{}
	for _, c := range cols {
		for idx, v := range c.rows {
			f := get(idx)
			if f == nil {
				continue
			}
			s := &f.sample
			switch strings.TrimPrefix(c.oid, ".1.3.6.1.2.1.") {
			case "2.2.1.2":
				s.Name = firstNonEmpty(s.Name, str(v))
			case "2.2.1.3":
				ifType[s.IfIndex] = int(num(v))
			case "2.2.1.5":
				speed32[s.IfIndex] = num(v)
			case "2.2.1.7":
				s.AdminUp = num(v) == 1
			case "2.2.1.8":
				s.OperUp = num(v) == 1
			case "2.2.1.10":
				if !f.hc {
					s.InOctets = num(v)
				}
			case "2.2.1.13":
				s.InDiscards = num(v)
			case "2.2.1.14":
				s.InErrors = num(v)
			case "2.2.1.16":
				if !f.hc {
					s.OutOctets = num(v)
				}
			case "2.2.1.19":
				s.OutDiscards = num(v)
			case "2.2.1.20":
				s.OutErrors = num(v)
			case "31.1.1.1.1":
				if n := str(v); n != "" {
					s.Name = n // ifName beats ifDescr
				}
			case "31.1.1.1.6":
				s.InOctets, f.hc = num(v), true
			case "31.1.1.1.10":
				s.OutOctets, f.hc = num(v), true
			case "31.1.1.1.15":
				speedHigh[s.IfIndex] = num(v)
			case "31.1.1.1.18":
				s.Alias = str(v)
			}
		}
	}
	// The ifTable columns come before the ifXTable ones in cols, so ifName
	// and the 64-bit counters overwrite ifDescr and the 32-bit ones.
	slices.Sort(order)
	out := make([]rawIface, 0, len(order))
	for _, i := range order {
		f := byIdx[i]
		f.sample.SpeedBps = trustedSpeed(speed32[i], speedHigh[i])
		f.sample.Class = Class(ifType[i], f.sample.Name)
		out = append(out, *f)
	}
	return out
}

// trustedSpeed is an interface's speed in bit/s when the device states
// one it can mean: ifHighSpeed (Mbit/s) first, else ifSpeed unless it is
// 0 or saturated at 2^32-1 ("more than 4.29 Gbit/s, see ifHighSpeed").
// 0 means unknown: no utilisation is computed then.
func trustedSpeed(speed32, highMbps uint64) uint64 {
	if highMbps > 0 {
		return highMbps * 1_000_000
	}
	if speed32 > 0 && speed32 < 1<<32-1 {
		return speed32
	}
	return 0
}

// readResources reads CPU, RAM and disk from HOST-RESOURCES-MIB, with
// UCD-SNMP's figures where HOST-RESOURCES has none (and UCD's RAM, which
// leaves buffers and cache out, where present). ucd are UCD-SNMP's
// scalars already read with the system group; nil: ask for them here.
func readResources(g *gosnmp.GoSNMP, cfg Config, ucd []gosnmp.SnmpPDU) (_ *record.ResourceSample, cpu cpuTicks, requests, varbinds int, _ error) {
	cols, requests, err := walkColumns(g, cfg.BulkVarbinds, 512,
		oidHrProcessorLoad, oidHrStorageEntry+"2", oidHrStorageEntry+"4", oidHrStorageEntry+"5", oidHrStorageEntry+"6")
	if err != nil {
		return nil, cpu, requests, 0, err
	}
	for _, c := range cols {
		varbinds += len(c.rows)
	}
	r := &record.ResourceSample{}
	if n := len(cols[0].rows); n > 0 {
		var sum float64
		for _, v := range cols[0].rows {
			sum += float64(num(v))
		}
		r.CPUPct = ptr(sum / float64(n))
	}
	var ramUsed, ramSize, diskUsed, diskSize float64
	for idx, t := range cols[1].rows {
		unit := float64(num(cols[2].rows[idx]))
		size := float64(num(cols[3].rows[idx])) * unit
		used := float64(num(cols[4].rows[idx])) * unit
		switch str(t) {
		case oidHrStorageRAM:
			ramUsed, ramSize = ramUsed+used, ramSize+size
		case oidHrStorageDisk:
			diskUsed, diskSize = diskUsed+used, diskSize+size
		}
	}
	if ramSize > 0 {
		r.MemPct = ptr(100 * ramUsed / ramSize)
	}
	if diskSize > 0 {
		r.DiskPct = ptr(100 * diskUsed / diskSize)
	}
	if ucd == nil {
		p, err := g.Get(append(slices.Clone(ucdScalars), ucdCPURaw...))
		requests++
		if err == nil && checkReport(p) == nil && p.Error == gosnmp.NoError {
			ucd = p.Variables
		}
	}
	if ucd != nil {
		vals := map[string]uint64{}
		for _, v := range ucd {
			if v.Type != gosnmp.NoSuchObject && v.Type != gosnmp.NoSuchInstance && v.Type != gosnmp.Null {
				vals[v.Name] = num(v)
				varbinds++
			}
		}
		for i, o := range ucdCPURaw {
			if v, ok := vals[o]; ok {
				cpu.total += v
				if i == 3 {
					cpu.idle, cpu.ok = v, true
				}
			}
		}
		if idle, ok := vals[oidUcdSsCPUIdle]; ok && r.CPUPct == nil && idle <= 100 && cpu.total == 0 {
			r.CPUPct = ptr(float64(100 - idle))
		}
		if total := vals[oidUcdMemTotal]; total > 0 {
			if avail, ok := vals[oidUcdMemAvail]; ok {
				used := float64(total) - float64(avail) - float64(vals[oidUcdMemBuffer]) - float64(vals[oidUcdMemCached])
				r.MemPct = ptr(max(0, 100*used/float64(total)))
			}
		}
	}
	if r.CPUPct != nil {
		cpu.ok = false // HOST-RESOURCES said it: no need of the ticks
	}
	if r.CPUPct == nil && r.MemPct == nil && r.DiskPct == nil && !cpu.ok {
		return nil, cpu, requests, varbinds, nil
	}
	return r, cpu, requests, varbinds, nil
}

// ucdScalars are UCD-SNMP's CPU idle percent and memory figures.
var ucdScalars = []string{oidUcdSsCPUIdle, oidUcdMemTotal, oidUcdMemAvail, oidUcdMemBuffer, oidUcdMemCached}

// ucdCPURaw are UCD-SNMP's cumulative CPU tick counters: user, nice,
// system, idle (index 3), wait, interrupt, softirq. hrProcessorLoad is a
// one-minute average an agent has only after its first minute; the ticks
// give the CPU use between two polls from the start.
var ucdCPURaw = []string{".1.3.6.1.4.1.2021.11.50.0", ".1.3.6.1.4.1.2021.11.51.0", ".1.3.6.1.4.1.2021.11.52.0",
	".1.3.6.1.4.1.2021.11.53.0", ".1.3.6.1.4.1.2021.11.54.0", ".1.3.6.1.4.1.2021.11.56.0", ".1.3.6.1.4.1.2021.11.61.0"}

// cpuTicks are UCD's idle and total ticks of one poll (ok: present).
type cpuTicks struct {
	idle, total uint64
	ok          bool
}

// cpuBetween is the CPU use in percent between two polls' ticks; false
// when they cannot say (missing, no tick passed, or counters reset).
func cpuBetween(prev, cur cpuTicks) (float64, bool) {
	if !prev.ok || !cur.ok || cur.total <= prev.total || cur.idle < prev.idle {
		return 0, false
	}
	dt, di := cur.total-prev.total, cur.idle-prev.idle
	if di > dt {
		return 0, false
	}
	return 100 * float64(dt-di) / float64(dt), true
}

func ptr[T any](v T) *T { return &v }

// num reads an integer-like varbind (Integer, Counter32/64, Gauge,
// TimeTicks) as uint64; negative integers read as 0.
func num(v gosnmp.SnmpPDU) uint64 {
	switch v.Type {
	case gosnmp.NoSuchObject, gosnmp.NoSuchInstance, gosnmp.EndOfMibView, gosnmp.Null, gosnmp.OctetString, gosnmp.ObjectIdentifier:
		return 0
	}
	b := gosnmp.ToBigInt(v.Value)
	if b.Sign() < 0 {
		return 0
	}
	return b.Uint64()
}

// str reads an OctetString, ObjectIdentifier or IpAddress varbind as
// text (bytes as they came; the store replaces invalid UTF-8).
func str(v gosnmp.SnmpPDU) string {
	switch x := v.Value.(type) {
	case []byte:
		return string(x)
	case string:
		return x
	}
	return ""
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
