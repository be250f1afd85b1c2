package hub

import (
	"context"
	"fmt"
	"os"
	"time"

	"netmon/app/audit"
	"netmon/app/auth"
	"netmon/app/auth/oidc"
	"netmon/app/netguard"
	"netmon/store/vault"
)

// buildAccess opens the credential vault and builds the auth service and
// the SSO provider.
// Loading the key is I/O (the file is read, or generated on first start)
// and so is checking it against the one the database was first used with:
// the SSO provider and the static enroll token are built with the vault.
func (h *Hub) buildAccess(ctx context.Context) error {
	vc := h.cfg.Vault
	key, generated, err := vault.LoadKey(vc, os.Getenv)
	if err != nil {
		return fmt.Errorf("vault: %w", err)
	}
	if generated {
		h.log.Warn("vault key generated: back it up, secrets sealed with it are lost without it", "file", vc.File)
	}
	if vc.Source == vault.SourceFile {
		if open, err := vault.FileModeTooOpen(vc.File); err == nil && open {
			h.log.Warn("vault key file is readable by group or others; chmod 600 it", "file", vc.File)
		}
	}
	if h.vault, err = vault.New(key); err != nil {
		return fmt.Errorf("vault: %w", err)
	}
	if _, err := vault.CheckKey(ctx, h.db, h.vault); err != nil {
		return fmt.Errorf("vault: %w", err)
	}
	if h.auth, err = auth.New(h.log.With("component", "auth"), h.cfg.Auth, h.db, audit.Builder{}, h.reg); err != nil {
		return fmt.Errorf("auth: %w", err)
	}
	h.parts.add("auth", h.auth.Start, noCtx(h.auth.Stop))
	outbound := h.outbound
	if outbound == nil {
		// OIDC discovery goes through the outbound guard (case 28): an
		// issuer on the LAN needs -outbound-allow.
		outbound = h.netGuard.HTTPClient(netguard.ClientOptions{Timeout: 15 * time.Second})
	}
	h.sso = oidc.New(h.log.With("component", "oidc"), h.cfg.OIDC, oidc.Deps{Sealer: h.vault, HTTPClient: outbound})
	return nil
}
