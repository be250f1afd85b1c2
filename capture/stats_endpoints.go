package capture

import (
	"net/netip"
	"slices"
)

// endpoint returns the counters of a, adding it if needed. When the table
// is full (limits.endpoints), the 1/evictFraction of entries with the
// smallest totals are evicted first: the table exists to find the top
// talkers, and a small entry is the least likely to become one. Evicting a
// batch keeps the cost amortised (one scan per table/evictFraction new
// endpoints) even under a flood of spoofed sources. A re-added address
// starts again from zero.
func (s *stats) endpoint(a addrKey) *endpointStat {
	// Packets come in bursts per peer: check the last slot used before
	// the map. The slot's own key validates it after an eviction or reset.
	if i := s.epLast; int(i) < len(s.epSlab) && s.epSlab[i].key == a && s.epSlab[i].packets > 0 {
		return &s.epSlab[i]
	}
	if i, ok := s.endpoints[a]; ok {
		s.epLast = i
		return &s.epSlab[i]
	}
	if len(s.endpoints) >= s.lim.endpoints {
		s.evictEndpoints()
	}
	var i int32
	if n := len(s.epFree); n > 0 {
		i = s.epFree[n-1]
		s.epFree = s.epFree[:n-1]
	} else {
		i = int32(len(s.epSlab))
		s.epSlab = append(s.epSlab, endpointStat{})
	}
	s.epSlab[i] = endpointStat{key: a}
	s.endpoints[a] = i
	s.epLast = i
	return &s.epSlab[i]
}

// evictEndpoints removes about len/evictFraction entries, those with the
// smallest totals (ties at the threshold in slab order). It walks the slab
// in order rather than the map: sequential reads cost a fraction of the
// map's scattered ones.
func (s *stats) evictEndpoints() {
	want := max(1, len(s.endpoints)/s.lim.evictFraction)
	if cap(s.evictBuf) < len(s.epSlab) {
		s.evictBuf = make([]int64, 0, cap(s.epSlab))
	}
	buf := s.evictBuf[:0]
	for i := range s.epSlab {
		if s.epSlab[i].packets > 0 {
			buf = append(buf, s.epSlab[i].total())
		}
	}
	threshold := nthSmallest(buf, want-1)

	removed := 0
	for pass := 0; pass < 2 && removed < want; pass++ { // below the threshold, then at it
		for i := range s.epSlab {
			ep := &s.epSlab[i]
			if ep.packets == 0 {
				continue
			}
			if t := ep.total(); t < threshold || (pass == 1 && t == threshold) {
				delete(s.endpoints, ep.key)
				*ep = endpointStat{}
				s.epFree = append(s.epFree, int32(i))
				if removed++; removed == want {
					break
				}
			}
		}
	}
	s.counters.EndpointsEvicted += int64(removed)
}

// nthSmallest returns the k-th smallest value of v (0-based), reordering
// v. Quickselect with a median-of-three pivot: linear on average and
// allocation-free.
func nthSmallest(v []int64, k int) int64 {
	lo, hi := 0, len(v)-1
	for lo < hi {
		mid := lo + (hi-lo)/2
		if v[mid] < v[lo] {
			v[mid], v[lo] = v[lo], v[mid]
		}
		if v[hi] < v[lo] {
			v[hi], v[lo] = v[lo], v[hi]
		}
		if v[hi] < v[mid] {
			v[hi], v[mid] = v[mid], v[hi]
		}
		pivot := v[mid]
		i, j := lo, hi
		for i <= j {
			for v[i] < pivot {
				i++
			}
			for v[j] > pivot {
				j--
			}
			if i <= j {
				v[i], v[j] = v[j], v[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return v[k]
		}
	}
	return v[k]
}

// topEndpoints returns the n endpoints with the largest totals, largest
// first, ties by address.
func (s *stats) topEndpoints(n int) []endpointRow {
	rows := make([]endpointRow, 0, n+1)
	worse := func(a, b endpointRow) bool { // a ranks below b
		if ta, tb := a.stat.total(), b.stat.total(); ta != tb {
			return ta < tb
		}
		return b.addr.Less(a.addr)
	}
	for i := range s.epSlab {
		if ep := &s.epSlab[i]; ep.packets > 0 {
			rows = pushTop(rows, endpointRow{addr: ep.key.addr(), stat: *ep}, n, worse)
		}
	}
	sortBest(rows, worse)
	return rows
}

type endpointRow struct {
	addr netip.Addr
	stat endpointStat
}

// sortBest sorts v best first under worse.
func sortBest[T any](v []T, worse func(a, b T) bool) {
	slices.SortFunc(v, func(a, b T) int {
		switch {
		case worse(a, b):
			return 1
		case worse(b, a):
			return -1
		}
		return 0
	})
}

// pushTop keeps in top (a min-heap under worse, at most n long) the n best
// items seen.
func pushTop[T any](top []T, x T, n int, worse func(a, b T) bool) []T {
	if len(top) < n {
		top = append(top, x)
		// sift up
		for i := len(top) - 1; i > 0; {
			p := (i - 1) / 2
			if !worse(top[i], top[p]) {
				break
			}
			top[i], top[p] = top[p], top[i]
			i = p
		}
		return top
	}
	if n == 0 || !worse(top[0], x) {
		return top
	}
	top[0] = x
	// sift down
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(top) && worse(top[l], top[m]) {
			m = l
		}
		if r < len(top) && worse(top[r], top[m]) {
			m = r
		}
		if m == i {
			break
		}
		top[i], top[m] = top[m], top[i]
		i = m
	}
	return top
}
