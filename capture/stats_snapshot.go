package capture

// Snapshot returns the statistics of spec section 2.1. Running, Device,
// Error and Dropped are left zero for the capture component to fill. Rates
// (bps_in, bps_out, bps_local, pps) are those of the last complete second:
// the one before the current second, which is the newest packet's second
// or, when the capture is idle, the clock's. History holds the last 120
// seconds up to the current one, oldest first, zeros for silent seconds.
// Slices and the protocol map are never nil.
//
// Snapshot holds the engine lock while it copies the tables (a scan of the
// endpoint table, at most 65 536 entries), and calls the Enricher after
// releasing it.
func (e *Engine) Snapshot() Snapshot {
	now := e.now().Unix()
	e.mu.Lock()
	st := &e.st
	snap := Snapshot{
		TotalPackets: st.totalPackets,
		TotalBytes:   st.totalBytes,
		Protocols:    make(map[string]int64, numProtos),
		TopPorts:     st.topPorts(st.lim.topPorts),
		TopDomains:   st.topDomains(st.lim.topDomains),
		History:      st.history(now, st.lim.history),
	}
	if st.seenAny {
		last := st.at(st.current(now) - 1)
		snap.BpsIn = float64(last.In * 8)
		snap.BpsOut = float64(last.Out * 8)
		snap.BpsLocal = float64(last.Local * 8)
		snap.PPS = last.Packets
	}
	for p, n := range st.protos {
		if n > 0 {
			snap.Protocols[protoNames[p]] = n
		}
	}
	rows := st.topEndpoints(st.lim.topEndpoints)
	snap.TopEndpoints = make([]Endpoint, len(rows))
	for i, r := range rows {
		snap.TopEndpoints[i] = Endpoint{
			IP:       r.addr.String(),
			Hostname: st.hostnames[r.addr],
			Local:    e.isLocal(r.addr),
			In:       r.stat.in,
			Out:      r.stat.out,
			Total:    r.stat.total(),
			Packets:  r.stat.packets,
		}
	}
	e.mu.Unlock()

	if e.enrich != nil {
		for i, r := range rows {
			if snap.TopEndpoints[i].Local {
				continue
			}
			if country, asn, ok := e.enrich.Lookup(r.addr); ok {
				snap.TopEndpoints[i].Country = country
				snap.TopEndpoints[i].ASN = asn
			}
		}
	}
	return snap
}

// topPorts returns the n ports with the most bytes, most first, ties by
// port number.
func (s *stats) topPorts(n int) []Port {
	worse := func(a, b uint16) bool {
		if ba, bb := s.ports[a].bytes, s.ports[b].bytes; ba != bb {
			return ba < bb
		}
		return a > b
	}
	top := make([]uint16, 0, n+1)
	for _, p := range s.portsUsed {
		top = pushTop(top, p, n, worse)
	}
	sortBest(top, worse)
	out := make([]Port, len(top))
	for i, p := range top {
		out[i] = Port{Port: int(p), Name: ServiceName(p), Bytes: s.ports[p].bytes, Packets: s.ports[p].packets}
	}
	return out
}
