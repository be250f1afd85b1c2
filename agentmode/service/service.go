// Package service registers the agent with the host's service manager
// (systemd, launchd, the Windows service control manager) through
// github.com/kardianos/service, and runs it under that manager.
//
// On systemd the unit is ours, not the library's default: Unit renders a
// hardened unit (only CAP_NET_RAW and CAP_NET_ADMIN, read-only system
// except the state directory, no home directories, private /tmp) that is
// handed to the library as its SystemdScript. The text is rendered here in
// full, so `netmon agent install --dry-run` prints exactly what install
// writes, and tests can assert it without installing anything.
//
// It sits under agentmode and imports nothing of netmon.
package service

import (
	"errors"
	"fmt"
	"os"
	"strings"

	ks "github.com/kardianos/service"
)

// DefaultName is the service's name (systemd unit netmon-agent.service).
const DefaultName = "netmon-agent"

// Config describes the service to register.
type Config struct {
	// Name is the service name; DefaultName when empty.
	Name string
	// Description is one line shown by the service manager.
	Description string
	// Executable is the absolute path of the netmon binary.
	Executable string
	// Arguments follow the executable: "agent" and its flags.
	Arguments []string
	// StateDir holds the state file, certificates and offline queue: the
	// service's working directory and its only writable path.
	StateDir string
}

func (c Config) name() string {
	if c.Name == "" {
		return DefaultName
	}
	return c.Name
}

// Unit renders the systemd unit for c.
func Unit(c Config) (string, error) {
	if !strings.HasPrefix(c.Executable, "/") {
		return "", fmt.Errorf("service executable %q: want an absolute path", c.Executable)
	}
	if !strings.HasPrefix(c.StateDir, "/") {
		return "", fmt.Errorf("service state directory %q: want an absolute path", c.StateDir)
	}
	exec := []string{systemdQuote(c.Executable)}
	for _, a := range c.Arguments {
		exec = append(exec, systemdQuote(a))
	}
	dir := systemdQuote(c.StateDir)
	desc := c.Description
	if desc == "" {
		desc = "netmon agent"
	}
	// Why each hardening line: the agent only needs raw sockets (packet
	// capture) and interface queries; it writes nothing outside its state
	// directory; it has no business in home directories or a shared /tmp.
	unit := `[Unit]
Description=` + oneLine(desc) + `
Wants=network-online.target
After=network-online.target

[Service]
Type=simple
ExecStart=` + strings.Join(exec, " ") + `
WorkingDirectory=` + dir + `
Restart=on-failure
RestartSec=5
AmbientCapabilities=CAP_NET_RAW CAP_NET_ADMIN
CapabilityBoundingSet=CAP_NET_RAW CAP_NET_ADMIN
NoNewPrivileges=yes
ProtectSystem=strict
ReadWritePaths=` + dir + `
ProtectHome=yes
PrivateTmp=yes
ProtectKernelModules=yes
ProtectControlGroups=yes
RestrictSUIDSGID=yes
LockPersonality=yes

[Install]
WantedBy=multi-user.target
`
	// kardianos/service reads SystemdScript as a template: text without
	// actions passes through unchanged, so none may appear in the values.
	if strings.Contains(unit, "{{") {
		return "", errors.New("service unit: paths and arguments must not contain \"{{\"")
	}
	return unit, nil
}

// systemdQuote quotes one ExecStart word: systemd splits on spaces, reads
// C-style escapes inside double quotes, expands %-specifiers and $VARS.
func systemdQuote(s string) string {
	s = strings.NewReplacer("%", "%%", "$", "$$").Replace(s)
	if s != "" && !strings.ContainsAny(s, " \t\"'\\;") {
		return s
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

func oneLine(s string) string { return strings.NewReplacer("\n", " ", "\r", " ").Replace(s) }

// Actions lists what Control accepts.
var Actions = []string{"install", "uninstall", "start", "stop", "restart", "status"}

// Control performs action on the service and returns a line to print.
func Control(c Config, action string) (string, error) {
	known := false
	for _, a := range Actions {
		known = known || a == action
	}
	if !known {
		return "", fmt.Errorf("service action %q: want one of %s", action, strings.Join(Actions, ", "))
	}
	s, err := newService(c, nopProgram{})
	if err != nil {
		return "", err
	}
	name := c.name()
	switch action {
	case "install":
		if err := os.MkdirAll(c.StateDir, 0o700); err != nil {
			return "", fmt.Errorf("create state directory: %w", err)
		}
		if err := s.Install(); err != nil {
			return "", fmt.Errorf("install service %s: %w", name, err)
		}
		return fmt.Sprintf("service %s installed (%s); start it with: netmon agent start", name, s.Platform()), nil
	case "uninstall":
		_ = s.Stop() // a stopped or never started service is fine
		if err := s.Uninstall(); err != nil {
			return "", fmt.Errorf("uninstall service %s: %w", name, err)
		}
		return fmt.Sprintf("service %s removed; the state directory is kept", name), nil
	case "start", "stop", "restart":
		var err error
		switch action {
		case "start":
			err = s.Start()
		case "stop":
			err = s.Stop()
		default:
			err = s.Restart()
		}
		if err != nil {
			return "", fmt.Errorf("%s service %s: %w", action, name, err)
		}
		return fmt.Sprintf("service %s: %s done", name, action), nil
	case "status":
		// Say what was asked and what it answered: the service manager
		// (linux-systemd, darwin-launchd, windows-service, ...) and the
		// service's state.
		mgr := s.Platform()
		st, err := s.Status()
		switch {
		case errors.Is(err, ks.ErrNotInstalled):
			return fmt.Sprintf("service %s (%s): not installed; 'netmon agent install' registers it", name, mgr), nil
		case err != nil:
			return "", fmt.Errorf("asked %s about service %s: %w (is the service manager running here?)", mgr, name, err)
		case st == ks.StatusRunning:
			return fmt.Sprintf("service %s (%s): installed and running", name, mgr), nil
		case st == ks.StatusStopped:
			return fmt.Sprintf("service %s (%s): installed, stopped; 'netmon agent start' starts it", name, mgr), nil
		default:
			return fmt.Sprintf("service %s (%s): installed, state unknown", name, mgr), nil
		}
	default:
		return "", fmt.Errorf("service action %q: want one of %s", action, strings.Join(Actions, ", "))
	}
}

// newService builds the library's service for c.
func newService(c Config, p ks.Interface) (ks.Service, error) {
	opts := ks.KeyValue{}
	if err := platformOptions(c, opts); err != nil {
		return nil, err
	}
	sc := &ks.Config{
		Name:             c.name(),
		DisplayName:      "netmon agent",
		Description:      c.Description,
		Executable:       c.Executable,
		Arguments:        c.Arguments,
		WorkingDirectory: c.StateDir,
		Option:           opts,
	}
	s, err := ks.New(p, sc)
	if err != nil {
		return nil, fmt.Errorf("service manager: %w", err)
	}
	return s, nil
}

// nopProgram satisfies the library for install and control actions, which
// never run the agent.
type nopProgram struct{}

func (nopProgram) Start(ks.Service) error { return nil }
func (nopProgram) Stop(ks.Service) error  { return nil }
