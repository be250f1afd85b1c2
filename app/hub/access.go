package hub

import (
	"context"
	"fmt"
	"net/http"
	"os"

	gooidc "github.com/coreos/go-oidc/v3/oidc"

	"netmon/app/audit"
	"netmon/app/auth"
	"netmon/app/auth/oidc"
	"netmon/store/vault"
)

// startAccess opens the credential vault (checking the key against the one
// the database was first used with) and starts the auth service.
func (h *Hub) startAccess(ctx context.Context) error {
	a := h.cfg.Access
	key, generated, err := vault.LoadKey(vault.Config{Source: a.VaultKeySource, File: a.VaultKeyFile}, os.Getenv)
	if err != nil {
		return fmt.Errorf("vault: %w", err)
	}
	if generated {
		h.log.Warn("vault key generated: back it up, secrets sealed with it are lost without it", "file", a.VaultKeyFile)
	}
	if a.VaultKeySource == "file" {
		if open, err := vault.FileModeTooOpen(a.VaultKeyFile); err == nil && open {
			h.log.Warn("vault key file is readable by group or others; chmod 600 it", "file", a.VaultKeyFile)
		}
	}
	h.vault, err = vault.New(key)
	if err != nil {
		return fmt.Errorf("vault: %w", err)
	}
	if _, err := vault.CheckKey(ctx, h.db, h.vault); err != nil {
		return fmt.Errorf("vault: %w", err)
	}

	acfg := auth.DefaultConfig()
	acfg.Password = a.AuthPassword
	acfg.MultiSite = a.MultiSite
	acfg.SessionStore = a.SessionStore
	h.auth, err = auth.New(h.log.With("component", "auth"), acfg, h.db, audit.Builder{}, h.reg)
	if err != nil {
		return fmt.Errorf("auth: %w", err)
	}
	return h.auth.Start()
}

// authRequired reports whether authentication is on (true on error: the
// warning is only for the plainly open case).
func (h *Hub) authRequired(ctx context.Context) bool {
	on, err := h.auth.Required(ctx)
	return err != nil || on
}

// ssoClient hands the provider the hub's outbound HTTP client with every
// call (go-oidc and oauth2 take it from the context).
type ssoClient struct {
	p      *oidc.Provider
	client *http.Client
}

func (s ssoClient) Enabled() bool { return s.p.Enabled() }

func (s ssoClient) Begin(ctx context.Context, w http.ResponseWriter, r *http.Request) (string, error) {
	return s.p.Begin(gooidc.ClientContext(ctx, s.client), w, r)
}

func (s ssoClient) Finish(ctx context.Context, w http.ResponseWriter, r *http.Request) (oidc.Login, error) {
	return s.p.Finish(gooidc.ClientContext(ctx, s.client), w, r)
}
