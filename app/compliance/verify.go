package compliance

import (
	"crypto/ed25519"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/transparency-dev/merkle/compact"
	"github.com/transparency-dev/merkle/rfc6962"
)

// Report is what Verify found.
type Report struct {
	// Records is how many records the bundle holds, all chained.
	Records uint64
	// Signed is how many of them a verified checkpoint covers; they run
	// from the bundle's first record to seq SignedThrough.
	Signed        uint64
	SignedThrough uint64
	Hourly        int
	Daily         int
	Stamped       int
	Warnings      []string
}

// ErrNothingSigned is wrapped by Verify's error when no record of the
// bundle (or, in a bundle without records, nothing at all) is covered by
// a checkpoint signed with a given key: such a bundle proves nothing,
// whoever made it.
var ErrNothingSigned = errors.New("not covered by any checkpoint signed with a given key")

// UnsealedError is Verify's error when the bundle verifies up to seq
// SignedThrough but its last records (the open tail) are covered by no
// signed checkpoint: the hub's open hour, or records added after the last
// signature — nothing tells them apart, so they prove nothing.
type UnsealedError struct {
	SignedThrough uint64 // seq of the last signed record
	First, Last   uint64 // the unsigned records, seq First..Last
}

func (e *UnsealedError) Error() string {
	return fmt.Sprintf("records seq %d to %d (%d) are chained but covered by no signed checkpoint: the hub's open hour, or records added after its last signature (seq %d); they prove nothing",
		e.First, e.Last, e.Last-e.First+1, e.SignedThrough)
}

// VerifyOptions are the verifier's trust anchors.
type VerifyOptions struct {
	// Keys are the ed25519 public keys a statement may be signed with (the
	// current one and any rotated-out one).
	Keys []ed25519.PublicKey
	// TSARoots, when set, must anchor every timestamp token's signer.
	TSARoots *x509.CertPool
	// Progress is called every 1<<20 records with the count so far.
	Progress func(records uint64)
}

// maxDays caps the distinct days of one bundle, which is what the
// verifier's memory grows with (a few KiB each): ten years.
const maxDays = 3660

type snap struct {
	root  []byte
	chain [32]byte
	last  uint64
}

type vday struct {
	tree  *compact.Range
	first uint64
	start [32]byte
	sizes map[uint64]snap
	last  uint64
}

// verifier is the state of one Verify: the records' trees per day, the
// chain values at every hour boundary, and the checkpoints read so far.
type verifier struct {
	opts    VerifyOptions
	keys    map[string]ed25519.PublicKey
	rep     Report
	prev    [32]byte
	started bool
	nextSeq uint64
	first   uint64 // seq of the bundle's first record
	days    map[string]*vday
	heads   map[uint64][32]byte // chain value after seq, at every hour boundary
	cur     *vday
	curHour int64
	enc     []byte
	st      statements
}

func (v *verifier) snapshot(d *vday, chain [32]byte, last uint64) {
	root := rfc6962.DefaultHasher.EmptyRoot()
	if d.tree.End() > 0 {
		root, _ = d.tree.GetRootHash(nil)
	}
	d.sizes[d.tree.End()] = snap{root: root, chain: chain, last: last}
	v.heads[last] = chain
}

// Verify reads a bundle as Evidence writes it and checks, fully offline:
// every record's encoding and chain value, the seq order, every day's
// Merkle root at every checkpoint (which proves each record's inclusion),
// the statement chain, every signature, and every timestamp token. The
// error names the first bad record, hour or day.
//
// Only signed statements decide: a record counts as evidence when a
// checkpoint signed with one of opts.Keys binds it (its day's Merkle root,
// or the chain value of a later record). A bundle where nothing is bound
// fails (ErrNothingSigned); one whose last records are not bound returns
// the Report with an *UnsealedError. No unsigned field of the bundle
// (generated_at, from, to, masked, verification, tsa_status) is read.
func Verify(r io.Reader, opts VerifyOptions) (Report, error) {
	v := &verifier{opts: opts, keys: map[string]ed25519.PublicKey{}, days: map[string]*vday{},
		heads: map[uint64][32]byte{}, curHour: math.MinInt64}
	for _, k := range opts.Keys {
		v.keys[KeyID(k)] = k
	}
	err := v.read(newScanner(r))
	if err == nil {
		err = v.coverage()
	}
	return v.rep, err
}

// read parses the bundle, checking records and statements as they come.
func (v *verifier) read(sc *scanner) error {
	var (
		l      BundleLog
		format string
		seen   = map[string]bool{}
	)
	sc.expect('{')
	for sc.err == nil && !sc.empty('}') {
		key := sc.quoted()
		sc.expect(':')
		switch key {
		case "logs", "checkpoints", "format", "chain_start":
			// A key given twice would let this verifier and another
			// reader of the file (jq keeps the last) see different data.
			if seen[key] {
				return fmt.Errorf("bundle: %q given twice", key)
			}
			seen[key] = true
		}
		switch key {
		case "logs":
			sc.expect('[')
			if !sc.empty(']') {
				for sc.err == nil {
					sc.log(&l)
					if sc.err != nil {
						if !v.started {
							return fmt.Errorf("the bundle's first record: unreadable: %w", sc.err)
						}
						return fmt.Errorf("record after seq %d: unreadable: %w", v.nextSeq-1, sc.err)
					}
					if err := v.record(&l); err != nil {
						return err
					}
					if !sc.more(']') {
						break
					}
				}
			}
			if v.cur != nil {
				v.snapshot(v.cur, v.prev, v.nextSeq-1)
			}
		case "checkpoints":
			sc.expect('[')
			if !sc.empty(']') {
				for sc.err == nil {
					raw := sc.raw()
					if sc.err != nil {
						break
					}
					var c BundleCheckpoint
					if err := json.Unmarshal(raw, &c); err != nil {
						return fmt.Errorf("bundle: checkpoint %d: %s", len(v.st.list)+1, clip(err.Error()))
					}
					if err := v.st.add(c, v.keys, v.opts.TSARoots, &v.rep); err != nil {
						return err
					}
					if !sc.more(']') {
						break
					}
				}
			}
		case "format", "chain_start":
			raw := sc.raw()
			var str string
			if sc.err == nil {
				if err := json.Unmarshal(raw, &str); err != nil {
					return fmt.Errorf("bundle: %s: %s", key, clip(err.Error()))
				}
			}
			if key == "format" {
				format = str
				break
			}
			// Unsigned, but harmless: a wrong start breaks the first
			// record's chain value, and the signed statements name the
			// chain value before each day.
			if v.started {
				return errors.New("bundle: chain_start after the records")
			}
			b, err := hex.DecodeString(str)
			if err != nil || len(b) != 32 {
				return errors.New("bundle: chain_start is not a 32-byte hex value")
			}
			copy(v.prev[:], b)
		default:
			sc.skip()
		}
		if !sc.more('}') {
			break
		}
	}
	if sc.err == nil {
		sc.end()
	}
	if sc.err != nil {
		return sc.err
	}
	if format != BundleFormat {
		return fmt.Errorf("bundle: format %q, want %q", clip(format), BundleFormat)
	}
	return nil
}

// record checks one entry against the chain and adds it to its day's
// tree, snapshotting the tree at every hour boundary.
func (v *verifier) record(l *BundleLog) error {
	switch {
	case !v.started && l.Seq == 0:
		return errors.New("the bundle's first record: seq 0 (seqs start at 1)")
	case v.started && l.Seq != v.nextSeq:
		return fmt.Errorf("record seq %d: out of order or missing — seq %d expected after %d (record deleted, inserted or reordered)", l.Seq, v.nextSeq, v.nextSeq-1)
	}
	if !v.started {
		v.first = l.Seq
	}
	v.started, v.nextSeq = true, l.Seq+1
	rec, commits, err := l.record()
	if err != nil {
		return fmt.Errorf("record seq %d: %w", l.Seq, err)
	}
	if v.enc, err = Encode(v.enc[:0], &rec, commits); err != nil {
		return fmt.Errorf("record seq %d: %w", l.Seq, err)
	}
	h := Next(v.prev, v.enc)
	var want [32]byte
	// hex.Decode writes past want for a longer value: check the length first.
	if len(l.H) != 64 {
		return fmt.Errorf("record seq %d: chain value is not 32 hex bytes", l.Seq)
	}
	if n, err := hex.Decode(want[:], []byte(l.H)); err != nil || n != 32 || want != h {
		return fmt.Errorf("record seq %d: content does not match the chain (record edited, or the chain broken before it)", l.Seq)
	}
	hour := l.At - l.At%3600
	if hour != v.curHour {
		if hour < v.curHour {
			return fmt.Errorf("record seq %d: appended before the previous record's hour", l.Seq)
		}
		if v.cur != nil {
			v.snapshot(v.cur, v.prev, l.Seq-1)
		}
		day := dayOf(l.At)
		if v.days[day] == nil {
			if len(v.days) >= maxDays {
				return fmt.Errorf("record seq %d: the bundle spans more than %d days (verify it in parts)", l.Seq, maxDays)
			}
			// Size 0: the day's checkpoints before its first record.
			v.days[day] = &vday{tree: rangeFactory.NewEmptyRange(0), first: l.Seq, start: v.prev,
				sizes: map[uint64]snap{0: {root: rfc6962.DefaultHasher.EmptyRoot(), chain: v.prev, last: l.Seq - 1}}}
			v.heads[l.Seq-1] = v.prev
		}
		v.cur, v.curHour = v.days[day], hour
	}
	_ = v.cur.tree.Append(rfc6962.DefaultHasher.HashLeaf(h[:]), nil)
	v.cur.last = l.Seq
	v.prev = h
	v.rep.Records++
	if v.opts.Progress != nil && v.rep.Records%(1<<20) == 0 {
		v.opts.Progress(v.rep.Records)
	}
	return nil
}

// record rebuilds the Record an entry encodes, and the commitments of its
// masked fields.
func (l BundleLog) record() (Record, map[int][32]byte, error) {
	k, ok := kindOf(l.Kind)
	if !ok {
		return Record{}, nil, fmt.Errorf("unknown kind %q", l.Kind)
	}
	r := Record{Seq: l.Seq, At: l.At, TS: l.TS, Kind: k, Vals: l.F}
	if l.Salt != "" {
		b, err := hex.DecodeString(l.Salt)
		if err != nil || len(b) != SaltSize {
			return r, nil, fmt.Errorf("salt is not %d hex bytes", SaltSize)
		}
		copy(r.Salt[:], b)
	}
	if len(l.Masked) == 0 {
		return r, nil, nil
	}
	commits := make(map[int][32]byte, len(l.Masked))
	for is, hx := range l.Masked {
		i, err := strconv.Atoi(is)
		b, herr := hex.DecodeString(hx)
		if err != nil || herr != nil || len(b) != 32 || i < 0 || i >= len(schema[k]) || schema[k][i].class == plain {
			return r, nil, fmt.Errorf("masked field %q: not a commitment of a maskable field", is)
		}
		var c [32]byte
		copy(c[:], b)
		commits[i] = c
	}
	return r, commits, nil
}
