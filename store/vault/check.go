package vault

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
)

// CheckSetting is the settings key under which CheckKey records the key
// check value.
const CheckSetting = "vault.key_check"

// ErrKeyMismatch is returned (wrapped) by CheckKey when the master key is
// not the one the database's secrets were sealed with.
var ErrKeyMismatch = errors.New("vault key does not match the key this database's secrets were sealed with (key check mismatch); restore the original key file or " + EnvKey)

// SettingsStore is the part of the settings table CheckKey needs;
// *store.DB satisfies it.
type SettingsStore interface {
	// GetSetting returns the value under key, or an error matching the
	// notFound error given to CheckKey when there is none.
	GetSetting(ctx context.Context, key string) (string, error)
	// PutSetting stores value under key.
	PutSetting(ctx context.Context, key, value string) error
}

// CheckKey compares v's key with the check value recorded in s. When none
// is recorded (first start) it records v's and returns stored=true. When
// the recorded value differs it returns an error wrapping ErrKeyMismatch,
// which the hub reports at start-up instead of failing later on every
// secret. notFound is the error (tested with errors.Is) by which s reports
// a missing setting: store.ErrNotFound for the store, passed in so that
// this leaf package need not import it.
//
// Two hubs starting for the very first time on one PostgreSQL database
// with different keys could both record theirs (the last write wins); the
// later start of the loser then fails with ErrKeyMismatch.
func CheckKey(ctx context.Context, s SettingsStore, v *Vault, notFound error) (stored bool, err error) {
	want := v.CheckValue()
	got, err := s.GetSetting(ctx, CheckSetting)
	switch {
	case err == nil:
		if subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
			return false, fmt.Errorf("check vault key against setting %s: %w", CheckSetting, ErrKeyMismatch)
		}
		return false, nil
	case notFound != nil && errors.Is(err, notFound):
		if err := s.PutSetting(ctx, CheckSetting, want); err != nil {
			return false, fmt.Errorf("record vault key check value: %w", err)
		}
		return true, nil
	default:
		return false, fmt.Errorf("read vault key check value: %w", err)
	}
}
