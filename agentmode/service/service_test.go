package service

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestUnit(t *testing.T) {
	got, err := Unit(Config{
		Description: "netmon agent",
		Executable:  "/usr/local/bin/netmon",
		Arguments:   []string{"agent", "--config", "/etc/netmon/agent.yaml", "--state", "/var/lib/netmon/netmon-agent.state.json"},
		StateDir:    "/var/lib/netmon",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `[Unit]
Description=netmon agent
Wants=network-online.target
After=network-online.target

[Service]
Type=simple
ExecStart=/usr/local/bin/netmon agent --config /etc/netmon/agent.yaml --state /var/lib/netmon/netmon-agent.state.json
WorkingDirectory=/var/lib/netmon
Restart=on-failure
RestartSec=5
AmbientCapabilities=CAP_NET_RAW CAP_NET_ADMIN
CapabilityBoundingSet=CAP_NET_RAW CAP_NET_ADMIN
NoNewPrivileges=yes
ProtectSystem=strict
ReadWritePaths=/var/lib/netmon
ProtectHome=yes
PrivateTmp=yes
ProtectKernelModules=yes
ProtectControlGroups=yes
RestrictSUIDSGID=yes
LockPersonality=yes

[Install]
WantedBy=multi-user.target
`
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("unit (-got, +want):\n%s", diff)
	}
}

func TestUnitQuoting(t *testing.T) {
	tests := []struct {
		desc, arg, want string
	}{
		{"plain", "--site=paris", "--site=paris"},
		{"space", "/opt/my dir/a.json", `"/opt/my dir/a.json"`},
		{"percent specifier", "50%", "50%%"},
		{"dollar variable", "$HOME", "$$HOME"},
		{"quote and backslash", `a"b\c`, `"a\"b\\c"`},
		{"empty", "", `""`},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			unit, err := Unit(Config{Executable: "/bin/netmon", Arguments: []string{tt.arg}, StateDir: "/var/lib/x y"})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(unit, "ExecStart=/bin/netmon "+tt.want+"\n") {
				t.Errorf("ExecStart line of:\n%s\nwant argument %s", unit, tt.want)
			}
			if !strings.Contains(unit, "ReadWritePaths=\"/var/lib/x y\"\n") {
				t.Errorf("ReadWritePaths not quoted:\n%s", unit)
			}
		})
	}
}

func TestUnitRefuses(t *testing.T) {
	tests := []struct {
		desc string
		cfg  Config
	}{
		{"relative executable", Config{Executable: "netmon", StateDir: "/var/lib/netmon"}},
		{"relative state dir", Config{Executable: "/bin/netmon", StateDir: "state"}},
		{"template action in an argument", Config{Executable: "/bin/netmon", StateDir: "/s", Arguments: []string{"{{Path}}"}}},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			if _, err := Unit(tt.cfg); err == nil {
				t.Error("no error")
			}
		})
	}
}

func TestControlRefusesUnknownAction(t *testing.T) {
	if _, err := Control(Config{}, "explode"); err == nil || !strings.Contains(err.Error(), "want one of") {
		t.Fatalf("error %v", err)
	}
}
