package enroll

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"

	"netmon/app/secret"
	"netmon/store"
)

// StaticTokenSetting is the settings key of the hub's generated static
// enroll token, sealed by the vault (the key is the associated data, so
// the blob cannot be moved to another setting).
const StaticTokenSetting = "fleet.static_enroll_token"

// Sealer seals secrets kept in the database (*vault.Vault).
type Sealer interface {
	Seal(plaintext, associatedData []byte) ([]byte, error)
	Open(blob, associatedData []byte) ([]byte, error)
}

// StaticStore is where the static token is kept (*store.DB).
type StaticStore interface {
	GetSetting(ctx context.Context, key string) (string, error)
	InTx(ctx context.Context, fn func(*store.Tx) error) error
}

// LoadStaticToken returns the hub's static enroll token when the operator
// set none: the one kept sealed in the database, or a new one kept there
// (created true), so that it survives restarts — provisioning scripts
// depend on it — until `netmon admin enroll-token rotate-static`.
func LoadStaticToken(ctx context.Context, db StaticStore, v Sealer) (token string, created bool, err error) {
	raw, err := db.GetSetting(ctx, StaticTokenSetting)
	switch {
	case err == nil:
		blob, err := base64.StdEncoding.DecodeString(raw)
		if err != nil {
			return "", false, fmt.Errorf("static enroll token: %w", err)
		}
		pt, err := v.Open(blob, []byte(StaticTokenSetting))
		if err != nil {
			return "", false, fmt.Errorf("static enroll token: %w", err)
		}
		return string(pt), false, nil
	case !errors.Is(err, store.ErrNotFound):
		return "", false, fmt.Errorf("static enroll token: %w", err)
	}
	token, err = putStaticToken(ctx, db, v, nil)
	return token, err == nil, err
}

// RotateStaticToken replaces the kept static token with a new one and
// records who did it; a running hub takes it at its next start.
func RotateStaticToken(ctx context.Context, db StaticStore, v Sealer, auditor Auditor, by store.AuditActor) (string, error) {
	ev := auditor.Event(ctx, by, ActionStaticTokenRotate, "enroll_token:static", ResultOK, "", nil, nil)
	return putStaticToken(ctx, db, v, &ev)
}

func putStaticToken(ctx context.Context, db StaticStore, v Sealer, ev *store.AuditEvent) (string, error) {
	token := NewStaticToken()
	blob, err := v.Seal([]byte(token), []byte(StaticTokenSetting))
	if err != nil {
		return "", fmt.Errorf("static enroll token: %w", err)
	}
	err = db.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.PutSetting(ctx, StaticTokenSetting, base64.StdEncoding.EncodeToString(blob)); err != nil {
			return err
		}
		if ev != nil {
			_, err := tx.AppendAudit(ctx, *ev)
			return err
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("static enroll token: %w", err)
	}
	return token, nil
}

// NewStaticToken returns a random static enroll secret for a hub started
// without -enroll-token.
func NewStaticToken() string { return secret.New("") }
