package store

// Running reports whether r's background loop is active.
func Running(r *Retention) bool { return r.running() }
