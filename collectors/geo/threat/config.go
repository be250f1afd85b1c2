package threat

import "time"

// Config names the files of the hub's domain lists.
type Config struct {
	// IOCFile is the threat list (-ioc-file): hosts-file, ad-block
	// (||domain^) or plain-text lines; empty = no list (the ioc rule
	// raises nothing, GET /api/v1/threatintel answers unknown).
	IOCFile string
	// CategoryFile maps domains to categories (-domain-category-file):
	// "domain category" per line; empty = no categories.
	CategoryFile string
	// Poll is how often the files' mtimes are checked (2 minutes).
	Poll time.Duration
}

// DefaultConfig has no files and the 2-minute poll.
func DefaultConfig() Config { return Config{Poll: DefaultPoll} }
