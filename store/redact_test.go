package store

import "testing"

func TestRedactDSN(t *testing.T) {
	tests := []struct {
		desc string
		dsn  string
		want string
	}{
		{"sqlite path unchanged", "/var/lib/netmon/netmon.db", "/var/lib/netmon/netmon.db"},
		{"no password", "postgres://u@h/db?sslmode=disable", "postgres://u@h/db?sslmode=disable"},
		{"password in user info", "postgres://u:secret@h/db", "postgres://u:xxxxx@h/db"},
		{"postgresql scheme", "postgresql://u:secret@h:5433/db", "postgresql://u:xxxxx@h:5433/db"},
		{"password parameter", "postgres://h/db?password=secret&user=u", "postgres://h/db?password=xxxxx&user=u"},
		{"unparseable URL", "postgres://u:se/cret@h/db", "postgres://xxxxx"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			if got := redactDSN(tt.dsn); got != tt.want {
				t.Errorf("redactDSN(%q) = %q, want %q", tt.dsn, got, tt.want)
			}
		})
	}
}
