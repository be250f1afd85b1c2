// Package pcaprec is the PCAP recorder: it writes captured frames to
// classic pcap files with size rotation, and serves the finished files
// back for download (spec 2.7, routes /api/record/*). Its name says what
// it is; store/record, the ingest vocabulary, is another thing.
//
// It sits beside capture/source as a producer-side leaf: it imports no
// other netmon package. The capture component owns one Recorder, feeds it
// every frame from its read loop (Write is a cheap no-op while idle), and
// the HTTP handlers call Start, Stop, Status, Files and Open. The Recorder
// is safe for that concurrent use.
package pcaprec

// Config configures a Recorder.
type Config struct {
	// Dir is the directory of the pcap files (flag -record-dir). It is
	// created with mode 0750 at the first Start if missing.
	Dir string
	// MaxBytes is the largest size of one file (flag -record-max-mb times
	// 1 MiB). A frame that would make the file larger starts a new file.
	MaxBytes int64
}

// Defaults of Config.
const (
	DefaultDir      = "captures"
	DefaultMaxBytes = 100 << 20
)

// DefaultConfig returns the defaults of the spec: directory "captures",
// 100 MiB per file.
func DefaultConfig() Config {
	return Config{Dir: DefaultDir, MaxBytes: DefaultMaxBytes}
}

// withDefaults fills zero fields with the defaults.
func (c Config) withDefaults() Config {
	if c.Dir == "" {
		c.Dir = DefaultDir
	}
	if c.MaxBytes <= 0 {
		c.MaxBytes = DefaultMaxBytes
	}
	return c
}
