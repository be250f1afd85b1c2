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
	// PutSettingOnce stores value under key unless a value is there
	// already, and returns the value now under key: value itself (stored
	// true) or the one found.
	PutSettingOnce(ctx context.Context, key, value string) (current string, stored bool, err error)
}

// CheckKey compares v's key with the check value recorded in s. When none
// is recorded (first start) it records v's and returns stored=true. When
// the recorded value differs it returns an error wrapping ErrKeyMismatch,
// which the hub reports at start-up instead of failing later on every
// secret. Two hubs starting for the very first time on one database with
// different keys cannot both record theirs: the second is refused.
func CheckKey(ctx context.Context, s SettingsStore, v *Vault) (stored bool, err error) {
	want := v.CheckValue()
	got, stored, err := s.PutSettingOnce(ctx, CheckSetting, want)
	switch {
	case err != nil:
		return false, fmt.Errorf("read vault key check value: %w", err)
	case stored:
		return true, nil
	case subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1:
		return false, fmt.Errorf("check vault key against setting %s: %w", CheckSetting, ErrKeyMismatch)
	}
	return false, nil
}
