package compliance

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"

	"github.com/transparency-dev/merkle/compact"
	"github.com/transparency-dev/merkle/rfc6962"

	"netmon/store"
)

var rangeFactory = &compact.RangeFactory{Hash: rfc6962.DefaultHasher.HashChildren}

// chain is the writer's state: the head of the hash chain, the current
// day's Merkle tree and the statement chain. Only the writer goroutine
// touches it.
type chain struct {
	s *Service

	seq    uint64
	head   [32]byte
	lastAt int64

	// hour is the first second of the open hour (the next to checkpoint);
	// records get at >= hour.
	hour int64
	prev [32]byte // hash of the last statement's body

	dayStart int64
	tree     *compact.Range
	first    uint64   // seq of the day's first record (0: none yet)
	start    [32]byte // chain value before the day's first record

	enc []byte
}

// load rebuilds the state from the database.
func (c *chain) load(ctx context.Context) error {
	db := c.s.deps.DB
	now := c.s.deps.Now().Unix()
	head, err := db.ComplianceHead(ctx)
	switch {
	case err == nil:
		c.seq, c.lastAt = head.Seq, head.At
		copy(c.head[:], head.Hash)
	case !errors.Is(err, store.ErrNotFound):
		return err
	}
	last, err := db.LastComplianceCheckpoint(ctx, "")
	switch {
	case err == nil:
		copy(c.prev[:], last.Hash)
		st, perr := ParseStatement(last.Body)
		if perr != nil {
			return fmt.Errorf("last statement: %w", perr)
		}
		c.s.checkDrift(st.Time)
		if st.Kind == "daily" {
			c.hour = st.Period + 86400
		} else {
			c.hour = st.Period + 3600
		}
	case errors.Is(err, store.ErrNotFound):
		c.hour = now - now%3600
		if lo, _, rerr := db.ComplianceSeqRange(ctx, 0, 1<<62); rerr == nil {
			_ = db.ScanCompliance(ctx, lo, lo, func(r store.ComplianceRecord) error {
				c.hour = r.At - r.At%3600
				return nil
			})
		}
	default:
		return err
	}
	c.dayStart = c.hour - c.hour%86400
	c.tree = rangeFactory.NewEmptyRange(0)
	c.start = c.head
	lo, _, err := db.ComplianceSeqRange(ctx, c.dayStart, 1<<62)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	c.first = lo
	c.start = [32]byte{}
	if lo > 1 {
		if err := db.ScanCompliance(ctx, lo-1, lo-1, func(r store.ComplianceRecord) error {
			copy(c.start[:], r.Hash)
			return nil
		}); err != nil {
			return err
		}
	}
	return db.ScanCompliance(ctx, lo, 0, func(r store.ComplianceRecord) error {
		return c.tree.Append(rfc6962.DefaultHasher.HashLeaf(r.Hash), nil)
	})
}

// append chains a batch and writes it. On a write error the state is
// rebuilt from the database, so the in-memory head never runs ahead of
// what is committed; the batch is then lost and counted.
func (c *chain) append(ctx context.Context, batch []pending) {
	now := c.s.deps.Now().Unix()
	c.advance(ctx, now)
	at := max(now, c.lastAt, c.hour)
	salts := make([]byte, SaltSize*len(batch))
	_, _ = rand.Read(salts)
	rows := make([]store.ComplianceRecord, len(batch))
	var r Record
	for i, p := range batch {
		c.seq++
		r = Record{Seq: c.seq, At: at, TS: p.ts, Kind: p.kind, Vals: p.vals}
		copy(r.Salt[:], salts[i*SaltSize:])
		var err error
		c.enc, err = Encode(c.enc[:0], &r, nil)
		if err != nil { // a programming error: schema and producer disagree
			c.s.log.Error("encode compliance record", "err", err)
			c.seq--
			rows = rows[:i]
			break
		}
		c.head = Next(c.head, c.enc)
		if c.first == 0 {
			c.first = c.seq
		}
		_ = c.tree.Append(rfc6962.DefaultHasher.HashLeaf(c.head[:]), nil)
		rows[i] = store.ComplianceRecord{Seq: c.seq, At: at, TS: p.ts, Kind: p.kind,
			Vals: packVals(nil, p.vals), Salt: salts[i*SaltSize : (i+1)*SaltSize], Hash: append([]byte(nil), c.head[:]...)}
	}
	c.lastAt = at
	if _, err := c.s.deps.DB.AppendCompliance(ctx, rows); err != nil {
		c.s.m.writeErrors.Inc()
		c.s.log.Error("append compliance records", "err", err, "records", len(rows))
		if lerr := c.load(context.Background()); lerr != nil {
			c.s.log.Error("reload compliance chain", "err", lerr)
		}
		return
	}
	for _, row := range rows {
		c.s.m.records.WithLabelValues(KindName(row.Kind)).Inc()
	}
}

// advance makes the statements of every hour that ended before now.
func (c *chain) advance(ctx context.Context, now int64) {
	for c.hour+3600 <= now {
		if err := c.checkpoint(ctx, now); err != nil {
			c.s.m.writeErrors.Inc()
			c.s.log.Error("compliance checkpoint", "err", err, "hour", c.hour)
			return
		}
	}
}

// checkpoint signs the open hour's tree head, and the day's seal when the
// hour is the day's last, then opens the next hour.
func (c *chain) checkpoint(ctx context.Context, now int64) error {
	size := c.tree.End()
	root := rfc6962.DefaultHasher.EmptyRoot()
	if size > 0 {
		var err error
		if root, err = c.tree.GetRootHash(nil); err != nil {
			return err
		}
	}
	st := Statement{Kind: "hourly", Period: c.hour, Day: dayOf(c.hour), Size: size, First: c.first, Last: c.seq,
		Start: c.start, Chain: c.head, Prev: c.prev, Time: now, Key: KeyID(c.s.PublicKey())}
	copy(st.Root[:], root)
	if _, err := c.sign(ctx, st); err != nil {
		return err
	}
	c.s.checkDrift(now)
	if (c.hour+3600)%86400 == 0 {
		st.Kind, st.Period, st.Prev = "daily", c.dayStart, c.prev
		id, err := c.sign(ctx, st)
		if err != nil {
			return err
		}
		c.s.sealed(ctx, id, st)
		c.dayStart += 86400
		c.tree = rangeFactory.NewEmptyRange(0)
		c.first, c.start = 0, c.head
	}
	c.hour += 3600
	return nil
}

func (c *chain) sign(ctx context.Context, st Statement) (int64, error) {
	body := st.Body()
	sum := sha256.Sum256([]byte(body))
	status := "none"
	if st.Kind == "daily" && c.s.cfg.TSAURL != "" {
		status = "error:pending"
	}
	id, err := c.s.deps.DB.AddComplianceCheckpoint(ctx, store.ComplianceCheckpoint{Kind: st.Kind, Period: st.Period, Body: body,
		Sig: ed25519.Sign(c.s.key, []byte(body)), Hash: sum[:], TSAStatus: status})
	if err != nil {
		return 0, err
	}
	c.prev = sum
	c.s.m.checkpoints.WithLabelValues(st.Kind).Inc()
	return id, nil
}
