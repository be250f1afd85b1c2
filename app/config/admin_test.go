package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
)

// TestLoadAdmin: the admin commands read the hub's settings from the same
// flags, variables and file, with a small pool by default; a hub file key
// they do not use is accepted, an unknown one refused.
func TestLoadAdmin(t *testing.T) {
	file := writeFile(t, "db: from-file.db\nport: 9000\nvault_key_file: /etc/netmon/vault.key\n")
	tests := []struct {
		desc    string
		env     map[string]string
		args    []string
		want    func(*AdminConfig)
		wantErr string
	}{
		{desc: "defaults", want: func(*AdminConfig) {}},
		{desc: "file, variable and flag", env: map[string]string{"NETMON_DB_MAX_CONNS": "7"}, args: []string{"--config", file, "--multi-site"},
			want: func(c *AdminConfig) {
				c.File, c.Store.DSN, c.Store.MaxConns, c.Auth.MultiSite, c.Vault.File = file, "from-file.db", 7, true, "/etc/netmon/vault.key"
			}},
		{desc: "unknown file key", args: []string{"--config", writeFile(t, "dbb: x\n")}, wantErr: `unknown key "dbb"`},
		{desc: "empty db", args: []string{"--db", " "}, wantErr: "db: must not be empty"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			fs := pflag.NewFlagSet("admin", pflag.ContinueOnError)
			AddAdminFlags(fs)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			got, err := LoadAdmin(fs)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := DefaultAdminConfig()
			tt.want(&want)
			if diff := cmp.Diff(got, want); diff != "" {
				t.Errorf("(-got, +want):\n%s", diff)
			}
		})
	}
}
