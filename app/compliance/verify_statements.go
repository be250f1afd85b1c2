package compliance

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"slices"
	"time"

	"github.com/transparency-dev/merkle/rfc6962"
)

// maxCheckpoints caps the statements of one bundle: a hundred years of
// hourly checkpoints and daily seals. Only statements that verified are
// kept (a bad one ends the read), so a forger cannot fill memory with
// them; the cap bounds even a replay of the hub's own history.
const maxCheckpoints = 100 * 366 * 25

// statements are the checkpoints of a bundle, each checked as it is read
// (its signature, its chain to the previous one and its timestamp) and
// kept, compact, to be matched against the records at the end.
type statements struct {
	list     []Statement
	names    []string
	prevHash [32]byte
}

// name is how messages call a statement: its hour or its day.
func stName(st Statement) string {
	if st.Kind == "daily" {
		return "day " + st.Day
	}
	return "hour " + time.Unix(st.Period, 0).UTC().Format("2006-01-02T15:04Z")
}

// add verifies one checkpoint on its own.
func (s *statements) add(c BundleCheckpoint, keys map[string]ed25519.PublicKey, roots *x509.CertPool, rep *Report) error {
	i := len(s.list)
	if i >= maxCheckpoints {
		return fmt.Errorf("bundle: more than %d checkpoints (verify it in parts)", maxCheckpoints)
	}
	st, err := ParseStatement(c.Body)
	name := fmt.Sprintf("checkpoint %d", i+1)
	if err == nil {
		name = stName(st)
	}
	if err != nil || st.Kind != c.Kind {
		msg := "kind differs from the statement's"
		if err != nil {
			msg = clip(err.Error())
		}
		return fmt.Errorf("%s: malformed statement: %s", name, msg)
	}
	pub, ok := keys[st.Key]
	if !ok {
		return fmt.Errorf("%s: signed by key %s, which is not among the given public keys", name, clip(st.Key))
	}
	sig, err := base64.StdEncoding.DecodeString(c.Sig)
	if err != nil || !ed25519.Verify(pub, []byte(c.Body), sig) {
		return fmt.Errorf("%s: signature invalid (statement replaced or altered)", name)
	}
	if i > 0 && st.Prev != s.prevHash {
		return fmt.Errorf("%s: does not chain to the previous checkpoint (a checkpoint replaced, removed or reordered)", name)
	}
	s.prevHash = sha256.Sum256([]byte(c.Body))
	if st.Kind == "daily" {
		rep.Daily++
		// tsa_status is unsigned: it only words the note.
		switch {
		case c.TSAToken == "":
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s: no timestamp (tsa_status %s)", name, clip(c.TSAStatus)))
		default:
			tok, err := base64.StdEncoding.DecodeString(c.TSAToken)
			if err != nil {
				return fmt.Errorf("%s: timestamp token: %w", name, err)
			}
			if err := CheckStamp(tok, s.prevHash[:], nil, roots); err != nil {
				return fmt.Errorf("%s: %s", name, clip(err.Error()))
			}
			if roots == nil {
				rep.Warnings = append(rep.Warnings, name+": timestamp signature checked, its certificate chain not (no --tsa-ca)")
			}
			rep.Stamped++
		}
	} else {
		rep.Hourly++
	}
	s.list = append(s.list, st)
	s.names = append(s.names, name)
	return nil
}

// coverage matches every verified statement against the records, then
// decides from the statements alone what the records prove: a record is
// evidence when a statement binds it, through its day's Merkle root or
// through the chain value of a later record (each chain value commits to
// every record before it). What follows the last bound record is the
// open tail.
func (v *verifier) coverage() error {
	last := v.nextSeq - 1 // seq of the bundle's last record, when v.started
	var bound uint64      // the last seq a statement binds (0: none)
	var latestDay string  // the latest day any statement signs
	sealed := map[string]bool{}
	for i, st := range v.st.list {
		name := v.st.names[i]
		d := v.days[st.Day]
		switch {
		case d == nil && st.Size > 0:
			return fmt.Errorf("%s: covers %d records of %s, the bundle holds none (records deleted or truncated)", name, st.Size, st.Day)
		case d == nil:
			if !bytes.Equal(st.Root[:], rfc6962.DefaultHasher.EmptyRoot()) {
				return fmt.Errorf("%s: empty tree with a non-empty root", name)
			}
			// A day without records: its statement names the chain value
			// after seq Last, which binds the records up to it.
			if !v.started || st.Last+1 < v.first {
				break // signed before this bundle's records: binds none
			}
			if st.Last > last {
				return fmt.Errorf("%s: covers records up to seq %d, the bundle's end at seq %d (records deleted or truncated)", name, st.Last, last)
			}
			if h, ok := v.heads[st.Last]; !ok || h != st.Chain {
				return fmt.Errorf("%s: chain head at seq %d differs from the records' (records changed)", name, st.Last)
			}
			bound = max(bound, st.Last)
		default:
			sn, ok := d.sizes[st.Size]
			if !ok {
				return fmt.Errorf("%s: covers %d records of %s, the bundle's records do not end an hour there (holds %d; records deleted, inserted or truncated after seq %d)", name, st.Size, st.Day, d.tree.End(), d.last)
			}
			if !bytes.Equal(sn.root, st.Root[:]) || sn.chain != st.Chain || sn.last != st.Last || (st.Size > 0 && st.First != d.first) || st.Start != d.start {
				return fmt.Errorf("%s: Merkle root or chain head differs from the records' (records of the hour changed)", name)
			}
			bound = max(bound, st.Last)
		}
		latestDay = max(latestDay, st.Day)
		if st.Kind == "daily" {
			sealed[st.Day] = true
		}
	}
	if len(v.st.list) == 0 {
		return fmt.Errorf("bundle of %d records: %w (a bundle forged, or its checkpoints removed)", v.rep.Records, ErrNothingSigned)
	}
	// The hub seals a day before it signs anything of the next one, so a
	// day of records without its seal, followed by a signed day, had its
	// seal removed. Only signed days decide (never generated_at).
	days := make([]string, 0, len(v.days))
	for day := range v.days {
		days = append(days, day)
	}
	slices.Sort(days)
	for _, day := range days {
		if !sealed[day] && day < latestDay {
			return fmt.Errorf("day %s: holds records (from seq %d) but no daily seal, and a later day is signed (checkpoints removed)", day, v.days[day].first)
		}
	}
	if !v.started {
		return nil
	}
	if bound < v.first {
		return fmt.Errorf("records seq %d to %d: %w: the last signed checkpoint ends before them (checkpoints removed, or records forged)", v.first, last, ErrNothingSigned)
	}
	v.rep.Signed, v.rep.SignedThrough = bound-v.first+1, bound
	if bound < last {
		return &UnsealedError{SignedThrough: bound, First: bound + 1, Last: last}
	}
	return nil
}
