package hub

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"netmon/app/config"
	"netmon/store/storetest"
)

// TestSignInStatus: /api/auth/status tells the console's login form how
// people sign in — whether RBAC users exist (ask for a username) and
// whether the bootstrap password still works — through the hub's
// lifecycle of the legacy password (spec section 3).
func TestSignInStatus(t *testing.T) {
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		status := func(h *testHub) (rbac, bootstrap bool) {
			t.Helper()
			r := h.client(t).call("GET", "/api/auth/status", nil)
			r.must(t, 200)
			var st struct {
				RBACUsers         *bool `json:"rbac_users"`
				BootstrapPassword *bool `json:"bootstrap_password"`
			}
			if err := json.Unmarshal([]byte(r.body), &st); err != nil || st.RBACUsers == nil || st.BootstrapPassword == nil {
				t.Fatalf("status %s: fields missing (%v)", r.body, err)
			}
			return *st.RBACUsers, *st.BootstrapPassword
		}
		// Both hubs open the one database, so they share its vault key.
		key := filepath.Join(t.TempDir(), "vault.key")
		open := startTestHub(t, dsn, func(c *config.HubConfig) { c.Vault.File = key })
		if rbac, boot := status(open); rbac || boot {
			t.Errorf("authentication off: rbac_users %v, bootstrap_password %v, want false, false", rbac, boot)
		}
		if err := open.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}

		h, boot := bootstrap(t, dsn, func(c *config.HubConfig) { c.Vault.File = key })
		if rbac, b := status(h); rbac || !b {
			t.Errorf("bootstrap password, no users: rbac_users %v, bootstrap_password %v, want false, true", rbac, b)
		}
		boot.createUser("viewer1", "viewer-pass-1", "viewer", "")
		if rbac, b := status(h); !rbac || !b {
			t.Errorf("a viewer but no admin: rbac_users %v, bootstrap_password %v, want true, true (break-glass)", rbac, b)
		}
		boot.createUser("admin1", "admin-pass-1", "admin", "")
		if rbac, b := status(h); !rbac || b {
			t.Errorf("an enabled admin: rbac_users %v, bootstrap_password %v, want true, false", rbac, b)
		}
	})
}
