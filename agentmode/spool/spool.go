// Package spool is the agent's offline queue (spec 1, "Agent behaviour"):
// telemetry batches that could not be sent wait on disk in a JSON-lines
// file (<state>.queue.jsonl), oldest first, at most Max of them, and are
// flushed in order when the hub answers again.
//
// The file is append-only between compactions: Push appends one line,
// Pop only advances an in-memory head, and the consumed prefix is cut
// away when the queue empties or more than half of it is consumed. A
// crash can therefore bring back batches that were already sent; the hub
// acknowledges a repeated seq without storing it twice, so a resend is
// harmless. Drops (queue full) rewrite the file at once, so a batch
// counted as dropped never comes back. A torn last line (a crash in the
// middle of an append) is skipped at Open without losing the lines
// before it.
//
// It sits under agentmode and imports nothing of netmon: a line is any
// JSON value.
package spool

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// Max is the spec's limit of queued batches.
const Max = 100

// Queue is a FIFO of JSON values persisted in one file. It is safe for
// concurrent use (the agent's sender writes, its logs and Stop read).
type Queue struct {
	mu      sync.Mutex
	path    string
	max     int
	f       *os.File
	size    int64   // bytes in the file
	entries []entry // every line in the file, in order
	head    int     // entries before head are consumed
}

type entry struct {
	off int64
	n   int // without the newline
}

// Open opens (or creates) the queue file at path holding at most max
// entries (Max when max <= 0). Skipped returns how many lines were
// unreadable (a torn or corrupt line); dropped how many of the oldest
// were discarded because the file held more than max.
func Open(path string, max int) (q *Queue, skipped, dropped int, err error) {
	if max <= 0 {
		max = Max
	}
	q = &Queue{path: path, max: max}
	raw, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, 0, 0, fmt.Errorf("open queue: %w", err)
	}
	var lines [][]byte
	lines, skipped = parse(raw)
	if len(lines) > max {
		dropped = len(lines) - max
		lines = lines[dropped:]
	}
	var off int64
	for _, l := range lines {
		q.entries = append(q.entries, entry{off: off, n: len(l)})
		off += int64(len(l)) + 1
	}
	if off != int64(len(raw)) || len(lines) == 0 {
		// Anything skipped (a torn tail, a bad or blank line, a drop):
		// rewrite, so the offsets hold and a torn tail cannot glue itself
		// to the next append.
		if err := q.rewrite(lines); err != nil {
			return nil, 0, 0, err
		}
		return q, skipped, dropped, nil
	}
	q.size = off
	if err := q.reopen(); err != nil {
		return nil, 0, 0, err
	}
	return q, skipped, dropped, nil
}

// parse splits raw into its valid JSON lines. A last line without its
// newline was cut by a crash mid-write; any line that is not valid JSON
// is skipped too (and counted).
func parse(raw []byte) (lines [][]byte, skipped int) {
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 0, 64<<10), len(raw)+1)
	complete := len(raw) == 0 || raw[len(raw)-1] == '\n'
	var all [][]byte
	for sc.Scan() {
		all = append(all, append([]byte(nil), sc.Bytes()...))
	}
	for i, l := range all {
		torn := i == len(all)-1 && !complete
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		if torn || !json.Valid(l) {
			skipped++
			continue
		}
		lines = append(lines, l)
	}
	return lines, skipped
}

// Len is the number of queued entries.
func (q *Queue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.len()
}

func (q *Queue) len() int { return len(q.entries) - q.head }

// Push appends v (one JSON value without newlines) as the newest entry.
// When the queue then holds more than its maximum, the oldest entries are
// discarded and their number returned.
func (q *Queue) Push(v []byte) (dropped int, err error) {
	if bytes.ContainsAny(v, "\r\n") || !json.Valid(v) {
		return 0, fmt.Errorf("queue push: not a single-line JSON value")
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	line := append(append(make([]byte, 0, len(v)+1), v...), '\n')
	if _, err := q.f.WriteAt(line, q.size); err != nil {
		// Cut a partial write so the next append starts a clean line.
		_ = q.f.Truncate(q.size)
		return 0, fmt.Errorf("queue push: %w", err)
	}
	q.entries = append(q.entries, entry{off: q.size, n: len(v)})
	q.size += int64(len(line))
	if q.len() <= q.max {
		return 0, nil
	}
	dropped = q.len() - q.max
	q.head += dropped
	return dropped, q.compact()
}

// Peek returns the oldest entry; ok is false when the queue is empty.
func (q *Queue) Peek() (v []byte, ok bool, err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.len() == 0 {
		return nil, false, nil
	}
	e := q.entries[q.head]
	buf := make([]byte, e.n)
	if _, err := q.f.ReadAt(buf, e.off); err != nil {
		return nil, false, fmt.Errorf("queue read: %w", err)
	}
	return buf, true, nil
}

// Pop removes the oldest entry.
func (q *Queue) Pop() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.len() == 0 {
		return nil
	}
	q.head++
	if q.head == len(q.entries) || q.head*2 > len(q.entries) {
		return q.compact()
	}
	return nil
}

// Close closes the file; the queue keeps its entries on disk.
func (q *Queue) Close() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.close()
}

func (q *Queue) close() error {
	if q.f == nil {
		return nil
	}
	err := q.f.Close()
	q.f = nil
	return err
}

// compact rewrites the file without the consumed entries.
func (q *Queue) compact() error {
	lines := make([][]byte, 0, q.len())
	for _, e := range q.entries[q.head:] {
		buf := make([]byte, e.n)
		if _, err := q.f.ReadAt(buf, e.off); err != nil {
			return fmt.Errorf("queue compact: %w", err)
		}
		lines = append(lines, buf)
	}
	return q.rewrite(lines)
}

// rewrite replaces the file with lines (temp file + rename). The handle
// is closed first: Windows cannot rename over an open file.
func (q *Queue) rewrite(lines [][]byte) error {
	if err := q.close(); err != nil {
		return fmt.Errorf("queue rewrite: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(q.path), filepath.Base(q.path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("queue rewrite: %w", err)
	}
	q.entries, q.head, q.size = q.entries[:0], 0, 0
	w := bufio.NewWriter(tmp)
	for _, l := range lines {
		q.entries = append(q.entries, entry{off: q.size, n: len(l)})
		q.size += int64(len(l)) + 1
		_, _ = w.Write(l)
		_ = w.WriteByte('\n')
	}
	err = w.Flush()
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), q.path)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("queue rewrite: %w", err)
	}
	return q.reopen()
}

func (q *Queue) reopen() error {
	// Not O_APPEND: writes go to an explicit offset (WriteAt), so a
	// failed append can be cut back with Truncate on every OS.
	f, err := os.OpenFile(q.path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("open queue: %w", err)
	}
	q.f = f
	return nil
}
