package compliance

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/transparency-dev/merkle/compact"
	"github.com/transparency-dev/merkle/rfc6962"
)

// Report is what Verify found when everything holds.
type Report struct {
	Records     uint64
	Hourly      int
	Daily       int
	Stamped     int
	Warnings    []string
	GeneratedAt string
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

func (d *vday) snapshot(chain [32]byte, last uint64) {
	root := rfc6962.DefaultHasher.EmptyRoot()
	if d.tree.End() > 0 {
		root, _ = d.tree.GetRootHash(nil)
	}
	d.sizes[d.tree.End()] = snap{root: root, chain: chain, last: last}
}

// Verify reads a bundle as Evidence writes it and checks, fully offline:
// every record's encoding and chain value, the seq order, every day's
// Merkle root at every checkpoint (which proves each record's inclusion),
// the statement chain, every signature, and every timestamp token. The
// error names the first bad record, hour or day.
func Verify(r io.Reader, opts VerifyOptions) (Report, error) {
	var rep Report
	keys := map[string]ed25519.PublicKey{}
	for _, k := range opts.Keys {
		keys[KeyID(k)] = k
	}
	sc := newScanner(r)
	var (
		prev    [32]byte
		started bool
		nextSeq uint64
		days    = map[string]*vday{}
		cur     *vday
		curHour int64 = -1
		cps     []BundleCheckpoint
		enc     []byte
		format  string
		l       BundleLog
	)
	// record checks one entry against the chain and adds it to its day's
	// tree, snapshotting the tree at every hour boundary.
	record := func(l *BundleLog) error {
		if started && l.Seq != nextSeq {
			return fmt.Errorf("record seq %d: out of order or missing — seq %d expected after %d (record deleted, inserted or reordered)", l.Seq, nextSeq, nextSeq-1)
		}
		started, nextSeq = true, l.Seq+1
		rec, commits, err := l.record()
		if err != nil {
			return fmt.Errorf("record seq %d: %w", l.Seq, err)
		}
		if enc, err = Encode(enc[:0], &rec, commits); err != nil {
			return fmt.Errorf("record seq %d: %w", l.Seq, err)
		}
		h := Next(prev, enc)
		var want [32]byte
		if n, err := hex.Decode(want[:], []byte(l.H)); err != nil || n != 32 || want != h {
			return fmt.Errorf("record seq %d: content does not match the chain (record edited, or the chain broken before it)", l.Seq)
		}
		hour := l.At - l.At%3600
		if hour != curHour {
			if hour < curHour {
				return fmt.Errorf("record seq %d: appended before the previous record's hour", l.Seq)
			}
			if cur != nil {
				cur.snapshot(prev, l.Seq-1)
			}
			day := dayOf(l.At)
			if days[day] == nil {
				// Size 0: the day's checkpoints before its first record.
				days[day] = &vday{tree: rangeFactory.NewEmptyRange(0), first: l.Seq, start: prev,
					sizes: map[uint64]snap{0: {root: rfc6962.DefaultHasher.EmptyRoot(), chain: prev, last: l.Seq - 1}}}
			}
			cur, curHour = days[day], hour
		}
		_ = cur.tree.Append(rfc6962.DefaultHasher.HashLeaf(h[:]), nil)
		cur.last = l.Seq
		prev = h
		rep.Records++
		if opts.Progress != nil && rep.Records%(1<<20) == 0 {
			opts.Progress(rep.Records)
		}
		return nil
	}
	sc.expect('{')
	for sc.err == nil && !sc.empty('}') {
		key := sc.quoted()
		sc.expect(':')
		switch key {
		case "logs":
			sc.expect('[')
			if !sc.empty(']') {
				for sc.err == nil {
					sc.log(&l)
					if sc.err != nil {
						return rep, fmt.Errorf("record after seq %d: unreadable: %w", nextSeq-1, sc.err)
					}
					if err := record(&l); err != nil {
						return rep, err
					}
					if !sc.more(']') {
						break
					}
				}
			}
			if cur != nil {
				cur.snapshot(prev, nextSeq-1)
			}
		case "checkpoints", "format", "generated_at", "chain_start":
			var dst any = &cps
			var str string
			if key != "checkpoints" {
				dst = &str
			}
			if err := json.Unmarshal(sc.raw(), dst); err != nil {
				return rep, fmt.Errorf("bundle: %s: %w", key, err)
			}
			switch key {
			case "format":
				format = str
			case "generated_at":
				rep.GeneratedAt = str
			case "chain_start":
				b, err := hex.DecodeString(str)
				if err != nil || len(b) != 32 {
					return rep, fmt.Errorf("bundle: chain_start is not a 32-byte hex value")
				}
				copy(prev[:], b)
			}
		default:
			sc.raw()
		}
		if !sc.more('}') {
			break
		}
	}
	if sc.err != nil {
		return rep, sc.err
	}
	if format != BundleFormat {
		return rep, fmt.Errorf("bundle: format %q, want %q", format, BundleFormat)
	}
	return rep, verifyStatements(&rep, cps, days, opts, keys)
}

func verifyStatements(rep *Report, cps []BundleCheckpoint, days map[string]*vday, opts VerifyOptions, keys map[string]ed25519.PublicKey) error {
	var prevHash [32]byte
	var lastCovered uint64
	sealed := map[string]bool{}
	for i, c := range cps {
		st, err := ParseStatement(c.Body)
		name := fmt.Sprintf("checkpoint %d", i+1)
		if err == nil {
			if st.Kind == "daily" {
				name = "day " + st.Day
			} else {
				name = "hour " + time.Unix(st.Period, 0).UTC().Format("2006-01-02T15:04Z")
			}
		}
		if err != nil || st.Kind != c.Kind {
			return fmt.Errorf("%s: malformed statement: %v", name, err)
		}
		pub, ok := keys[st.Key]
		if !ok {
			return fmt.Errorf("%s: signed by key %s, which is not among the given public keys", name, st.Key)
		}
		sig, err := base64.StdEncoding.DecodeString(c.Sig)
		if err != nil || !ed25519.Verify(pub, []byte(c.Body), sig) {
			return fmt.Errorf("%s: signature invalid (statement replaced or altered)", name)
		}
		if i > 0 && st.Prev != prevHash {
			return fmt.Errorf("%s: does not chain to the previous checkpoint (a checkpoint replaced, removed or reordered)", name)
		}
		prevHash = sha256.Sum256([]byte(c.Body))
		d := days[st.Day]
		switch {
		case d == nil && st.Size > 0:
			return fmt.Errorf("%s: covers %d records of %s, the bundle holds none (records deleted or truncated)", name, st.Size, st.Day)
		case d == nil:
			if !bytes.Equal(st.Root[:], rfc6962.DefaultHasher.EmptyRoot()) {
				return fmt.Errorf("%s: empty tree with a non-empty root", name)
			}
		default:
			sn, ok := d.sizes[st.Size]
			if !ok {
				return fmt.Errorf("%s: covers %d records of %s, the bundle's records do not end an hour there (holds %d; records deleted, inserted or truncated after seq %d)", name, st.Size, st.Day, d.tree.End(), d.last)
			}
			if !bytes.Equal(sn.root, st.Root[:]) || sn.chain != st.Chain || sn.last != st.Last || (st.Size > 0 && st.First != d.first) || st.Start != d.start {
				return fmt.Errorf("%s: Merkle root or chain head differs from the records' (records of the hour changed)", name)
			}
		}
		lastCovered = max(lastCovered, st.Last)
		if st.Kind == "daily" {
			rep.Daily++
			sealed[st.Day] = true
			if c.TSAToken == "" {
				rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s: no timestamp (tsa_status %s)", name, c.TSAStatus))
				continue
			}
			tok, err := base64.StdEncoding.DecodeString(c.TSAToken)
			if err != nil {
				return fmt.Errorf("%s: timestamp token: %w", name, err)
			}
			if err := CheckStamp(tok, prevHash[:], nil, opts.TSARoots); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			if opts.TSARoots == nil {
				rep.Warnings = append(rep.Warnings, name+": timestamp signature checked, its certificate chain not (no --tsa-ca)")
			}
			rep.Stamped++
		} else {
			rep.Hourly++
		}
	}
	gen, _ := time.Parse(time.RFC3339, rep.GeneratedAt)
	for day, d := range days {
		if !sealed[day] && day < gen.UTC().Format(time.DateOnly) {
			return fmt.Errorf("day %s: holds records (from seq %d) but no daily seal (checkpoints removed or truncated)", day, d.first)
		}
		if d.last > lastCovered {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("day %s: records after seq %d are chained but not yet checkpointed (the open hour)", day, lastCovered))
		}
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
