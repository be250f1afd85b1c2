package compliance

import (
	"bufio"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"time"

	"netmon/store"
)

type storeCheckpoint = store.ComplianceCheckpoint

// BundleFormat names the evidence format (the bundle's "format").
const BundleFormat = "netmon-compliance-evidence/1"

// BundleLog is one record in a bundle. F holds the field values in the
// kind's order (README "Compliance log"); H the chain value h_seq, hex.
// Unmasked, Salt (hex) lets the verifier commit to the PII fields itself;
// masked, the PII values are pseudonyms and Masked maps each masked
// field's index to the commitment of its real value, so the verifier
// rebuilds the exact sealed encoding without ever seeing the value.
type BundleLog struct {
	Seq    uint64            `json:"seq"`
	At     int64             `json:"at"`
	TS     int64             `json:"ts"`
	Kind   string            `json:"kind"`
	F      []string          `json:"f"`
	Salt   string            `json:"salt,omitempty"`
	Masked map[string]string `json:"masked,omitempty"`
	H      string            `json:"h"`
}

// BundleCheckpoint is a signed statement in a bundle: Kind "hourly" or
// "daily", Body the exact signed text, Sig its base64 ed25519 signature,
// TSAToken (daily) the base64 DER RFC 3161 TimeStampResp over
// SHA-256(Body).
type BundleCheckpoint struct {
	Kind      string `json:"kind"`
	Body      string `json:"body"`
	Sig       string `json:"sig"`
	TSAStatus string `json:"tsa_status,omitempty"`
	TSAToken  string `json:"tsa_token,omitempty"`
}

// Verification is the bundle's closing summary, for a reader; the
// verifier recomputes all of it.
type Verification struct {
	Method     string `json:"method"`
	Records    uint64 `json:"records"`
	ChainStart string `json:"chain_start"`
	ChainHead  string `json:"chain_head"`
}

// Evidence streams the bundle of the UTC days from..to (inclusive) to w:
// {format, generated_at, from, to, masked, fields, chain_start, logs[],
// checkpoints[], verification}. Records are read page by page and written
// one by one, so memory stays flat whatever the range.
func (s *Service) Evidence(ctx context.Context, w io.Writer, from, to time.Time, mask bool) error {
	if !s.cfg.Enabled {
		return errOff
	}
	fromAt, toAt := from.Unix(), to.Unix()+86400
	db := s.deps.DB
	bw := bufio.NewWriterSize(w, 256<<10)
	var start [32]byte
	lo, hi, err := db.ComplianceSeqRange(ctx, fromAt, toAt)
	empty := errors.Is(err, store.ErrNotFound)
	if err != nil && !empty {
		return err
	}
	if !empty && lo > 1 {
		if err := db.ScanCompliance(ctx, lo-1, lo-1, func(r store.ComplianceRecord) error { copy(start[:], r.Hash); return nil }); err != nil {
			return err
		}
	}
	fields := map[string][]string{}
	for k, fs := range schema {
		for _, f := range fs {
			fields[KindName(k)] = append(fields[KindName(k)], f.name)
		}
	}
	head := map[string]any{"format": BundleFormat, "generated_at": s.deps.Now().UTC().Format(time.RFC3339),
		"from": from.Format(time.DateOnly), "to": to.Format(time.DateOnly), "masked": mask, "fields": fields,
		"key_id": KeyID(s.PublicKey()), "chain_start": hex.EncodeToString(start[:])}
	hb, _ := json.Marshal(head)
	bw.Write(hb[:len(hb)-1])
	bw.WriteString(`,"logs":[`)
	m := newMasker(mask)
	n := uint64(0)
	last := start
	var line []byte
	if !empty {
		err = db.ScanCompliance(ctx, lo, hi, func(r store.ComplianceRecord) error {
			l, err := m.log(r)
			if err != nil {
				return err
			}
			if n > 0 {
				bw.WriteByte(',')
			}
			bw.WriteByte('\n')
			line, _ = appendJSON(line[:0], l)
			bw.Write(line)
			n++
			copy(last[:], r.Hash)
			return nil
		})
		if err != nil {
			return fmt.Errorf("evidence: %w", err)
		}
	}
	bw.WriteString("\n],\"checkpoints\":[")
	cps, err := db.ListComplianceCheckpoints(ctx, "", fromAt, toAt)
	if err != nil {
		return err
	}
	for i, c := range cps {
		if i > 0 {
			bw.WriteByte(',')
		}
		b, _ := json.Marshal(bundleCheckpoint(c))
		bw.WriteByte('\n')
		bw.Write(b)
	}
	v, _ := json.Marshal(Verification{Method: "netmon compliance verify BUNDLE --pub compliance.key.pub [--tsa-ca tsa-ca.pem]",
		Records: n, ChainStart: hex.EncodeToString(start[:]), ChainHead: hex.EncodeToString(last[:])})
	bw.WriteString("\n],\"verification\":")
	bw.Write(v)
	bw.WriteString("}\n")
	return bw.Flush()
}

// appendJSON writes a log entry by hand: it is the hot loop of a download.
func appendJSON(b []byte, l BundleLog) ([]byte, error) {
	b = append(b, `{"seq":`...)
	b = strconv.AppendUint(b, l.Seq, 10)
	b = append(b, `,"at":`...)
	b = strconv.AppendInt(b, l.At, 10)
	b = append(b, `,"ts":`...)
	b = strconv.AppendInt(b, l.TS, 10)
	b = append(b, `,"kind":"`...)
	b = append(b, l.Kind...)
	b = append(b, `","f":[`...)
	for i, v := range l.F {
		if i > 0 {
			b = append(b, ',')
		}
		q, err := json.Marshal(v)
		if err != nil {
			return b, err
		}
		b = append(b, q...)
	}
	b = append(b, ']')
	if l.Salt != "" {
		b = append(b, `,"salt":"`...)
		b = append(b, l.Salt...)
		b = append(b, '"')
	}
	if len(l.Masked) > 0 {
		q, _ := json.Marshal(l.Masked)
		b = append(b, `,"masked":`...)
		b = append(b, q...)
	}
	b = append(b, `,"h":"`...)
	b = append(b, l.H...)
	b = append(b, `"}`...)
	return b, nil
}

// masker turns stored records into bundle entries, pseudonymising PII
// with a key drawn per bundle: the same value maps to the same pseudonym
// inside one bundle, and to unrelated ones across bundles.
type masker struct {
	on  bool
	key []byte
}

func newMasker(on bool) *masker {
	k := make([]byte, 32)
	_, _ = rand.Read(k)
	return &masker{on: on, key: k}
}

func (m *masker) log(r store.ComplianceRecord) (BundleLog, error) {
	vals, err := unpackVals(r.Vals)
	if err != nil {
		return BundleLog{}, fmt.Errorf("record %d: %w", r.Seq, err)
	}
	l := BundleLog{Seq: r.Seq, At: r.At, TS: r.TS, Kind: KindName(r.Kind), F: vals, H: hex.EncodeToString(r.Hash)}
	if !m.on {
		l.Salt = hex.EncodeToString(r.Salt)
		return l, nil
	}
	l.Masked = map[string]string{}
	for i, f := range schema[r.Kind] {
		if f.class == plain || i >= len(vals) {
			continue
		}
		c := Commit(r.Salt, i, vals[i])
		l.Masked[strconv.Itoa(i)] = hex.EncodeToString(c[:])
		switch f.class {
		case piiIP:
			vals[i] = m.pseudo("ip", vals[i])
		case piiName:
			vals[i] = m.pseudo("name", vals[i])
		case piiText:
			vals[i] = m.text(vals[i])
		}
	}
	return l, nil
}

func (m *masker) pseudo(prefix, v string) string {
	if v == "" {
		return ""
	}
	h := hmac.New(sha256.New, m.key)
	h.Write([]byte(prefix))
	h.Write([]byte{0})
	h.Write([]byte(v))
	return prefix + "-" + hex.EncodeToString(h.Sum(nil)[:6])
}

var (
	reMAC  = regexp.MustCompile(`(?i)\b[0-9a-f]{2}(?:[:-][0-9a-f]{2}){5}\b`)
	reIPv4 = regexp.MustCompile(`\b(?:\d{1,3}\.){3}\d{1,3}\b`)
	reIPv6 = regexp.MustCompile(`(?i)\b(?:[0-9a-f]{1,4}:){2,7}(?::|[0-9a-f]{1,4})|::(?:[0-9a-f]{1,4}:){0,6}[0-9a-f]{1,4}\b`)
	reUser = regexp.MustCompile(`(?i)\b(user(?:name)?|login|for|by|account|uid)([=: ]+)("[^"]*"|[^\s,;]+)`)
)

// text masks the addresses, MACs and user names inside free text (a
// syslog message); the whole text is committed, so nothing is lost.
func (m *masker) text(v string) string {
	v = reMAC.ReplaceAllStringFunc(v, func(s string) string { return m.pseudo("mac", s) })
	v = reIPv4.ReplaceAllStringFunc(v, func(s string) string { return m.pseudo("ip", s) })
	v = reIPv6.ReplaceAllStringFunc(v, func(s string) string { return m.pseudo("ip", s) })
	return reUser.ReplaceAllStringFunc(v, func(s string) string {
		sm := reUser.FindStringSubmatch(s)
		return sm[1] + sm[2] + m.pseudo("user", sm[3])
	})
}
