package prompt

import (
	"net/netip"
)

// The scanner walks text once. It cuts it into chunks of the bytes that
// can make up an address, a MAC, a name or a token ([A-Za-z0-9._:%-]);
// every other byte is a boundary and is copied as is. Inside a chunk it
// tries, at each position: a registered or private name (at the start
// of a dotted name), a token-looking string (escaped as tok-N), then a
// MAC or an address (validated by net/netip, never by a pattern alone).
// A match is widened to whole words ([A-Za-z0-9_]) on both sides, so a
// token always stands alone and Reveal finds exactly what was written;
// a widened match becomes a host token for the exact text.
type scanner struct {
	p       *Pseudonyms
	src     string
	out     []byte
	last    int // src is copied to out up to here
	changed bool
	// the previous emission: its start in src and out, to merge with a
	// match glued to it (so two tokens never touch).
	prevEnd, prevStart, prevOut int
	lower                       []byte
}

// maxAddrRun bounds a candidate address (45 bytes for the longest IPv6
// form, plus a zone id): longer runs are not addresses, and the bound
// keeps the scan linear.
const (
	maxAddrRun = 64
	maxZone    = 32
)

// Byte classes, looked up in one table (the scan's inner loop).
const (
	cWord   = 1 << iota // [A-Za-z0-9_]
	cName               // word, '.', '-'
	cChunk              // name, ':', '%'
	cHex                // [0-9A-Fa-f]
	cHexRun             // hex, ':', '.'
)

// classes is read-only after its initialisation.
var classes = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		b := byte(c)
		var k uint8
		if b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '_' {
			k |= cWord | cName | cChunk
		}
		if b == '.' || b == '-' {
			k |= cName | cChunk
		}
		if b == ':' || b == '%' {
			k |= cChunk
		}
		if b >= '0' && b <= '9' || b >= 'a' && b <= 'f' || b >= 'A' && b <= 'F' {
			k |= cHex | cHexRun
		}
		if b == ':' || b == '.' {
			k |= cHexRun
		}
		t[c] = k
	}
	return t
}()

func isWordByte(c byte) bool   { return classes[c]&cWord != 0 }
func isNameByte(c byte) bool   { return classes[c]&cName != 0 }
func isChunkByte(c byte) bool  { return classes[c]&cChunk != 0 }
func isHex(c byte) bool        { return classes[c]&cHex != 0 }
func isHexRunByte(c byte) bool { return classes[c]&cHexRun != 0 }

func (s *scanner) run() {
	s.prevEnd = -1
	src := s.src
	for i := 0; i < len(src); {
		if !isChunkByte(src[i]) {
			i++
			continue
		}
		j := i + 1
		for j < len(src) && isChunkByte(src[j]) {
			j++
		}
		s.chunk(i, j)
		i = j
	}
	if s.changed {
		s.out = append(s.out, src[s.last:]...)
	}
}

// emit replaces src[a:b] by the token of (kind, key); a match glued to
// the previous one (a name followed by "::5") is merged with it into one
// host token for the whole text.
func (s *scanner) emit(a, b int, kind, key string) {
	if !s.changed {
		s.changed = true
		s.out = make([]byte, 0, len(s.src)+len(s.src)/8)
	}
	if a == s.prevEnd && a > 0 && isWordByte(s.src[a-1]) {
		s.out = s.out[:s.prevOut]
		a = s.prevStart
		kind, key = KindHost, s.src[a:b]
	} else {
		s.out = append(s.out, s.src[s.last:a]...)
	}
	s.prevStart, s.prevOut, s.prevEnd = a, len(s.out), b
	s.out = append(s.out, s.p.token(kind, key, s.src[a:b])...)
	s.last = b
}

func (s *scanner) chunk(i, j int) {
	src := s.src
	for pos := i; pos < j; {
		c := src[pos]
		atWord := pos == i || !isWordByte(src[pos-1])
		if atWord && (pos == i || !isNameByte(src[pos-1])) {
			if end, kind, key, ok := s.name(pos, j); ok {
				s.emit(pos, end, kind, key)
				pos = end
				continue
			}
		}
		if atWord {
			if end, ok := matchToken(src[:j], pos); ok {
				s.emit(pos, end, KindTok, src[pos:end])
				pos = end
				continue
			}
		}
		if (isHex(c) || c == ':') && (pos == i || !isHexRunByte(src[pos-1]) || c == ':' && pos == s.prevEnd) {
			if a, b, kind, key, ok := s.addr(pos, j); ok {
				// Widen a match glued to a letter or digit, so the token
				// does not touch one: over words and the address bytes
				// ".:" too, so what is left beside the token is never the
				// cut-off piece of a longer run ("1::0.0X1::0" must not
				// leave "1::0." behind). Emitted text (s.last) is not
				// taken back.
				wa, wb := a, b
				if a > i && a > s.last && isWordByte(src[a-1]) || b < j && isWordByte(src[b]) {
					for wa > i && wa > s.last && (isWordByte(src[wa-1]) || isHexRunByte(src[wa-1])) {
						wa--
					}
					for wb < j && (isWordByte(src[wb]) || isHexRunByte(src[wb])) {
						wb++
					}
					kind, key = KindHost, src[wa:wb]
				}
				s.emit(wa, wb, kind, key)
				pos = wb
				continue
			}
		}
		pos++
	}
}

// name matches a registered name, or a dotted name with a registered
// host as a label or under a registered or private domain, starting at
// pos (the start of a dotted name).
func (s *scanner) name(pos, j int) (end int, kind, key string, ok bool) {
	src := s.src
	e := pos
	dots := false
	for e < j && isNameByte(src[e]) {
		dots = dots || src[e] == '.'
		e++
	}
	for e > pos && (src[e-1] == '.' || src[e-1] == '-') {
		e--
	}
	if e == pos || (!dots && !s.p.nameLens.has(e-pos)) {
		return 0, "", "", false
	}
	s.lower = s.lower[:0]
	upper := false
	for k := pos; k < e; k++ {
		c := src[k]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
			upper = true
		}
		s.lower = append(s.lower, c)
	}
	l := s.lower
	p := s.p
	// The key is the lower-case text: the source itself when it is
	// lower case already (no allocation).
	keyOf := func() string {
		if upper {
			return string(l)
		}
		return src[pos:e]
	}
	if p.nameLens.has(len(l)) {
		if k, found := p.names[string(l)]; found {
			return e, k, keyOf(), true
		}
	}
	if !dots {
		return 0, "", "", false
	}
	start := 0
	for k := 0; k <= len(l); k++ {
		if k < len(l) && l[k] != '.' {
			continue
		}
		if p.nameLens.has(k-start) && p.names[string(l[start:k])] == KindHost ||
			p.domainLens.has(len(l)-start) && p.domains[string(l[start:])] {
			return e, KindHost, keyOf(), true
		}
		start = k + 1
	}
	return 0, "", "", false
}

// addr matches a MAC or an address starting at pos, returning its span
// (which may start later, for an address glued to hex letters).
func (s *scanner) addr(pos, j int) (a, b int, kind, key string, ok bool) {
	src := s.src
	if end, k, found := matchMAC(src, pos, j); found {
		return pos, end, KindMAC, k, true
	}
	r := pos
	for r < j && r-pos <= maxAddrRun && isHexRunByte(src[r]) {
		r++
	}
	if r-pos > maxAddrRun {
		return 0, 0, "", "", false
	}
	run := src[pos:r]
	// Fast exit for ordinary words: an address has a separator.
	sep := false
	for k := 0; k < len(run); k++ {
		if run[k] == ':' || run[k] == '.' {
			sep = true
			break
		}
	}
	if !sep {
		return 0, 0, "", "", false
	}
	// A run glued to letters (eth0:fe80::1): the part after the first
	// colon first, so the token can stand alone.
	if pos > 0 && isWordByte(src[pos-1]) {
		for k := 0; k < len(run)-1; k++ {
			if run[k] == ':' {
				if run[k+1] != ':' {
					if x, y, kd, ky, found := s.addrAt(pos+k+1, r, j); found {
						return x, y, kd, ky, true
					}
				}
				break
			}
		}
	}
	if x, y, kd, ky, found := s.addrAt(pos, r, j); found {
		return x, y, kd, ky, true
	}
	// An IPv4 address inside a longer hex run (abc10.0.0.1).
	for k := 0; k < len(run); k++ {
		if run[k] < '0' || run[k] > '9' || (k > 0 && (run[k-1] >= '0' && run[k-1] <= '9' || run[k-1] == '.')) {
			continue
		}
		e := k
		for e < len(run) && (run[e] >= '0' && run[e] <= '9' || run[e] == '.') {
			e++
		}
		if ad, found := acceptAddr(trimDots(run[k:e])); found && ad.Is4() {
			v := trimDots(run[k:e])
			return pos + k, pos + k + len(v), KindIP, v, true
		}
		k = e
	}
	return 0, 0, "", "", false
}

// addrAt tries src[pos:r] (a hex run) as an address, with a zone id
// after it, or as IPv4:port.
func (s *scanner) addrAt(pos, r, j int) (a, b int, kind, key string, ok bool) {
	src := s.src
	run := src[pos:r]
	if r < j && src[r] == '%' {
		z := r + 1
		for z < j && z-r <= maxZone && isNameByte(src[z]) {
			z++
		}
		for z > r+1 && (src[z-1] == '.' || src[z-1] == '-') {
			z--
		}
		if z > r+1 {
			if ad, found := acceptAddr(src[pos:z]); found {
				return pos, z, KindIP6, s.canon(ad, src[pos:z]), true
			}
		}
	}
	v := trimDots(run)
	if len(v) > 1 && v[len(v)-1] == ':' && v[len(v)-2] != ':' {
		v = v[:len(v)-1] // "addr:" before a message
	}
	if ad, found := acceptAddr(v); found {
		return pos, pos + len(v), addrKind(ad), s.canon(ad, v), true
	}
	// IPv4:port.
	for k := len(v) - 1; k > 0; k-- {
		if v[k] == ':' {
			if ad, found := acceptAddr(v[:k]); found && ad.Is4() {
				return pos, pos + k, KindIP, v[:k], true
			}
			break
		}
		if v[k] < '0' || v[k] > '9' {
			break
		}
	}
	return 0, 0, "", "", false
}

// canon returns the canonical text of a parsed from text v: v itself
// when it is canonical (always for IPv4, which netip parses only in its
// canonical dotted form), else a new string.
func (s *scanner) canon(a netip.Addr, v string) string {
	if a.Is4() {
		return v
	}
	s.lower = a.AppendTo(s.lower[:0])
	if string(s.lower) == v {
		return v
	}
	return string(s.lower)
}

func addrKind(a netip.Addr) string {
	if a.Is4() {
		return KindIP
	}
	return KindIP6
}

func trimDots(v string) string {
	for len(v) > 0 && v[len(v)-1] == '.' {
		v = v[:len(v)-1]
	}
	return v
}

// acceptAddr parses v as an address that identifies something: not the
// unspecified or loopback address, not an IPv4 netmask 255.x, and for
// IPv6 at least two groups or a leading "::" (so "d::" in "std::string"
// is code, not an address).
func acceptAddr(v string) (netip.Addr, bool) {
	if len(v) < 2 {
		return netip.Addr{}, false
	}
	a, err := netip.ParseAddr(v)
	if err != nil {
		return netip.Addr{}, false
	}
	if u := a.WithZone(""); u.IsUnspecified() || u.IsLoopback() {
		return netip.Addr{}, false
	}
	if a.Is4() {
		b := a.As4()
		if b[0] == 255 && isMask(b) {
			return netip.Addr{}, false
		}
		return a, true
	}
	groups := 0
	for k := 0; k < len(v) && v[k] != '%'; k++ {
		if isHex(v[k]) && (k == 0 || v[k-1] == ':') {
			groups++
		}
	}
	if groups < 2 && !(len(v) > 2 && v[0] == ':' && v[1] == ':') {
		return netip.Addr{}, false
	}
	return a, true
}

func isMask(b [4]byte) bool {
	m := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	return m&(^m>>1) == 0 || ^m&(^m+1) == 0 // ones then zeros
}

// matchMAC matches an EUI-48 at pos in colon (aa:bb:…), dash (aa-bb-…)
// or Cisco dot (aabb.ccdd.eeff) form, and returns its canonical form.
func matchMAC(src string, pos, j int) (int, string, bool) {
	var hex [12]byte
	n := 0
	end := 0
	switch {
	case pos+17 <= j && (src[pos+2] == ':' || src[pos+2] == '-'):
		sep := src[pos+2]
		for g := 0; g < 6; g++ {
			o := pos + 3*g
			if !isHex(src[o]) || !isHex(src[o+1]) || (g < 5 && src[o+2] != sep) {
				return 0, "", false
			}
			hex[n], hex[n+1] = src[o], src[o+1]
			n += 2
		}
		end = pos + 17
		if end < j && (isHex(src[end]) || src[end] == sep) {
			return 0, "", false
		}
	case pos+14 <= j && src[pos+4] == '.':
		for g := 0; g < 3; g++ {
			o := pos + 5*g
			for k := 0; k < 4; k++ {
				if !isHex(src[o+k]) {
					return 0, "", false
				}
				hex[n] = src[o+k]
				n++
			}
			if g < 2 && src[o+4] != '.' {
				return 0, "", false
			}
		}
		end = pos + 14
		if end < j && (isHex(src[end]) || src[end] == '.' && end+1 < j && isHex(src[end+1])) {
			return 0, "", false
		}
	default:
		return 0, "", false
	}
	var k [17]byte
	for g := 0; g < 6; g++ {
		k[3*g], k[3*g+1] = lowerHex(hex[2*g]), lowerHex(hex[2*g+1])
		if g < 5 {
			k[3*g+2] = ':'
		}
	}
	return end, string(k[:]), true
}

func lowerHex(c byte) byte {
	if c >= 'A' && c <= 'F' {
		return c + 'a' - 'A'
	}
	return c
}

// parseMAC returns the canonical form of a MAC in any of the three forms.
func parseMAC(v string) (string, bool) {
	end, k, ok := matchMAC(v, 0, len(v))
	return k, ok && end == len(v)
}
