package vault_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"netmon/store"
	"netmon/store/storetest"
	"netmon/store/vault"
)

// memSettings is an in-memory SettingsStore.
type memSettings struct {
	m   map[string]string
	err error // returned by every call when set
}

func (s *memSettings) PutSettingOnce(_ context.Context, key, value string) (string, bool, error) {
	if s.err != nil {
		return "", false, s.err
	}
	if v, ok := s.m[key]; ok {
		return v, false, nil
	}
	s.m[key] = value
	return value, true, nil
}

// checkKeySequence runs the start-up sequence of three hubs on one
// settings store: the first records its key, the second (same key) matches,
// the third (another key) is refused.
func checkKeySequence(t *testing.T, s vault.SettingsStore) {
	t.Helper()
	right, wrong := newVault(t, testKey(1)), newVault(t, testKey(2))
	tests := []struct {
		desc       string
		vault      *vault.Vault
		wantStored bool
		wantErr    error
	}{
		{"first start records the check value", right, true, nil},
		{"later start with the same key", right, false, nil},
		{"later start with another key", wrong, false, vault.ErrKeyMismatch},
		{"the original key still matches", right, false, nil},
	}
	for _, tt := range tests {
		stored, err := vault.CheckKey(t.Context(), s, tt.vault)
		if !errors.Is(err, tt.wantErr) {
			t.Fatalf("%s: CheckKey error = %v, want %v", tt.desc, err, tt.wantErr)
		}
		if stored != tt.wantStored {
			t.Errorf("%s: stored = %v, want %v", tt.desc, stored, tt.wantStored)
		}
		if err != nil && !strings.Contains(err.Error(), "restore the original key file or "+vault.EnvKey) {
			t.Errorf("%s: error %q does not tell the operator what to do", tt.desc, err)
		}
	}
	got, stored, err := s.PutSettingOnce(t.Context(), vault.CheckSetting, "other")
	if err != nil || stored || got != right.CheckValue() {
		t.Errorf("setting %s = %q, %v; want the first key's check value", vault.CheckSetting, got, err)
	}
}

func TestCheckKeyMemory(t *testing.T) {
	checkKeySequence(t, &memSettings{m: map[string]string{}})
}

func TestCheckKeyStore(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		checkKeySequence(t, db)
	})
}

func TestCheckKeyReadError(t *testing.T) {
	broken := errors.New("database down")
	s := &memSettings{m: map[string]string{}, err: broken}
	stored, err := vault.CheckKey(t.Context(), s, newVault(t, testKey(1)))
	if !errors.Is(err, broken) || stored {
		t.Errorf("CheckKey = %v, %v; want the read error and stored=false", stored, err)
	}
	if len(s.m) != 0 {
		t.Error("CheckKey wrote a check value although it could not read the stored one")
	}
}
