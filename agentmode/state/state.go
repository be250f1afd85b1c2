// Package state is the agent's memory across restarts (spec 1, "Agent
// behaviour"): the identity the hub issued, the random machine id sent in
// every hello, the pinned hub CA, the 401 streak, the next telemetry seq
// and the count of dropped batches not yet reported. It lives in one JSON
// file (netmon-agent.state.json by default), mode 0600, always replaced
// atomically (temp file + rename) so a crash leaves the old or the new
// version, never half of one. The client certificate files beside it
// (<state>.crt, <state>.key, <state>.ca) are written the same way.
//
// It sits under agentmode and imports nothing of netmon.
package state

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
)

// State is the content of the state file.
type State struct {
	// HubURL is the hub the identity below belongs to.
	HubURL string `json:"hub_url,omitempty"`
	// AgentID and AgentToken are the identity the hub issued at hello.
	AgentID    int64  `json:"agent_id,omitempty"`
	AgentToken string `json:"agent_token,omitempty"`
	// MachineID is random, created once, sent in every hello so that a
	// re-enrollment replaces this machine's record on the hub.
	MachineID string `json:"machine_id"`
	// CAPEM is the pinned hub CA (trust on first use); empty until pinned.
	CAPEM string `json:"ca_pem,omitempty"`
	// Unauthorized counts consecutive 401 answers to telemetry; three
	// trigger a re-enrollment. Persisted so a restart does not reset it.
	Unauthorized int `json:"unauthorized_streak,omitempty"`
	// NextSeq is the seq of the next telemetry batch (1, 2, 3 ...).
	NextSeq uint64 `json:"next_seq"`
	// Dropped counts batches the offline queue discarded and the hub has
	// not been told about yet.
	Dropped uint64 `json:"dropped,omitempty"`
	// IntervalSeconds is the last telemetry interval the hub asked for, so
	// a restarted agent produces at the hub's pace before it reconnects.
	IntervalSeconds int `json:"interval_seconds,omitempty"`
	// ProtocolVersion is the protocol agreed with the hub at hello.
	ProtocolVersion int `json:"protocol_version,omitempty"`
	// PcapDisabled is the hub's deep-collection policy last learnt
	// (pcap_enabled=false, -agent-pcap=false), kept so a restarted agent
	// honours it before it hears from the hub again. The zero value,
	// enabled, is the hub's default.
	PcapDisabled bool `json:"pcap_disabled,omitempty"`
}

// Enrolled reports whether the state holds an identity issued by a hub.
func (s State) Enrolled() bool { return s.AgentToken != "" }

// Store holds the state in memory and writes every change to its file.
// It is safe for concurrent use.
type Store struct {
	path string
	mu   sync.Mutex
	s    State
}

// ErrCorrupt is wrapped by Open and Read when the state file is not valid.
var ErrCorrupt = errors.New("state file is corrupt")

// Read returns the state stored at path. A missing file gives an error
// wrapping fs.ErrNotExist; an unreadable one wraps ErrCorrupt.
func Read(path string) (State, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return State{}, fmt.Errorf("read state file: %w", err)
	}
	var s State
	if err := json.Unmarshal(raw, &s); err != nil {
		return State{}, fmt.Errorf("%w: %s: %v (repair it, or delete it to enroll this machine again)", ErrCorrupt, path, err)
	}
	if s.MachineID == "" {
		return State{}, fmt.Errorf("%w: %s: no machine_id (repair it, or delete it to enroll this machine again)", ErrCorrupt, path)
	}
	return s, nil
}

// Open loads the state file at path, or creates it with a new random
// machine id when it does not exist yet.
func Open(path string) (*Store, error) {
	s, err := Read(path)
	switch {
	case err == nil:
		if s.NextSeq == 0 {
			s.NextSeq = 1
		}
		return &Store{path: path, s: s}, nil
	case errors.Is(err, fs.ErrNotExist):
		id, err := newMachineID()
		if err != nil {
			return nil, err
		}
		st := &Store{path: path, s: State{MachineID: id, NextSeq: 1}}
		if err := st.save(); err != nil {
			return nil, err
		}
		return st, nil
	default:
		return nil, err
	}
}

// Path is the state file's path.
func (st *Store) Path() string { return st.path }

// Get returns a copy of the current state.
func (st *Store) Get() State {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.s
}

// Update applies fn to the state and writes the file. When the write
// fails the change is kept in memory (the agent goes on) and the error is
// returned for the caller to log.
func (st *Store) Update(fn func(*State)) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	fn(&st.s)
	return st.save()
}

func (st *Store) save() error {
	raw, err := json.MarshalIndent(st.s, "", "  ")
	if err != nil {
		return fmt.Errorf("encode state: %w", err)
	}
	return WriteFile(st.path, append(raw, '\n'))
}

func newMachineID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("machine id: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// WriteFile replaces path with data atomically: a temporary file in the
// same directory (mode 0600 from its creation) is written, synced and
// renamed over path. Readers see the old or the new content, never a mix.
func WriteFile(path string, data []byte) error {
	dir, base := splitPath(path)
	// The default state directory (~/.local/state/netmon, /var/lib/netmon)
	// may not exist yet on a first run; only the owner may list it.
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	f, err := os.CreateTemp(dir, base+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			_ = f.Close()
			_ = os.Remove(tmp)
		}
	}()
	// CreateTemp already uses 0600; saying it again keeps the promise
	// should that default ever change.
	if err := f.Chmod(0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	ok = true
	syncDir(dir)
	return nil
}
