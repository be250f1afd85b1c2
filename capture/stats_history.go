package capture

import "net/netip"

// bucket returns the bucket of second sec, starting it if needed, or nil
// when sec is older than the ring (a packet with a stale timestamp still
// counts in the totals and tables, not in the history).
func (s *stats) bucket(sec int64) *Bucket {
	if !s.seenAny {
		s.seenAny = true
		s.newest, s.oldest = sec, sec
	}
	if sec > s.newest {
		s.newest = sec
	}
	if sec <= s.newest-ringSeconds {
		return nil
	}
	if sec < s.oldest {
		s.oldest = sec
	}
	b := &s.ring[ringIndex(sec)]
	if b.TS != sec {
		*b = Bucket{TS: sec}
	}
	return b
}

func ringIndex(sec int64) int {
	i := sec % ringSeconds
	if i < 0 {
		i += ringSeconds
	}
	return int(i)
}

// at returns the bucket of second sec, zero if nothing was seen then or it
// left the ring.
func (s *stats) at(sec int64) Bucket {
	if b := s.ring[ringIndex(sec)]; b.TS == sec {
		return b
	}
	return Bucket{TS: sec}
}

// current is the second in progress: the newest packet's second, or the
// clock's when it is ahead (the capture is idle). Seconds before it are
// complete.
func (s *stats) current(now int64) int64 {
	if s.seenAny && s.newest > now {
		return s.newest
	}
	return now
}

// history returns the last n seconds ending at the current second, oldest
// first, zeros where nothing was seen; it starts no earlier than the first
// packet and is empty before it.
func (s *stats) history(now int64, n int) []Bucket {
	if !s.seenAny {
		return []Bucket{}
	}
	end := s.current(now)
	start := max(s.oldest, end-int64(n)+1, end-ringSeconds+1)
	out := make([]Bucket, 0, end-start+1)
	for sec := start; sec <= end; sec++ {
		out = append(out, s.at(sec))
	}
	return out
}

// MinuteStats is the traffic of one minute, summed from the per-second
// buckets, for the once-a-minute history rows.
type MinuteStats struct {
	TS      int64 // the minute's first second
	In      int64 // bytes received from remote addresses
	Out     int64 // bytes sent to remote addresses
	Local   int64 // bytes between local addresses and non-IP frames
	Packets int64
	PeakIn  int64 // largest In of one second of the minute
	PeakOut int64 // largest Out of one second of the minute
	Seconds int64 // seconds of the minute with at least one packet
}

// Minute returns the traffic of the 60 seconds starting at ts (normally a
// multiple of 60), summed from the seconds still in the engine's ring.
// ok reports that the minute is over and wholly inside the ring, so the
// sums are final: call it a few seconds after the minute ends (late
// packets of its last second are then counted) and no later than two
// minutes after it ends. With ok false the sums cover what is there: a
// minute in progress (the last one when a capture stops) or one partly
// gone. A minute with no traffic is ok with zeros; seconds before the last
// Reset read as zeros.
func (e *Engine) Minute(ts int64) (MinuteStats, bool) {
	now := e.now().Unix()
	e.mu.Lock()
	defer e.mu.Unlock()
	cur := e.st.current(now)
	m := MinuteStats{TS: ts}
	for sec := ts; sec < ts+60; sec++ {
		b := e.st.at(sec)
		m.In += b.In
		m.Out += b.Out
		m.Local += b.Local
		m.Packets += b.Packets
		m.PeakIn = max(m.PeakIn, b.In)
		m.PeakOut = max(m.PeakOut, b.Out)
		if b.Packets > 0 {
			m.Seconds++
		}
	}
	return m, ts+60 <= cur && ts > cur-ringSeconds
}

// TakeRemoteMinute returns the bytes exchanged with each public remote
// address (global unicast, neither local-scope nor in LocalNets; both
// directions) since the previous call or the last Reset, and starts a new
// period. The caller owns the map. The lead calls it once a minute when
// writing history rows; the period follows the calls, not packet
// timestamps. At most 10 000 addresses are kept per period: packets of
// further addresses are counted in Counters.RemoteOverflow (and their
// bytes in RemoteOverflowBytes) instead.
func (e *Engine) TakeRemoteMinute() map[netip.Addr]int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	// Copy and clear rather than swap maps: the engine's map keeps its
	// buckets, so Process does not allocate after each hand-over.
	m := make(map[netip.Addr]int64, len(e.st.remote))
	for k, v := range e.st.remote {
		m[k.addr()] = v
	}
	clear(e.st.remote)
	return m
}
