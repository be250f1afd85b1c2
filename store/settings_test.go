package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"netmon/store"
	"netmon/store/storetest"
)

func TestSettings(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tests := []struct {
			desc    string
			puts    [][2]string // key, value, in order
			get     string
			want    string
			wantErr error
		}{
			{desc: "missing key", get: "absent", wantErr: store.ErrNotFound},
			{desc: "round trip", puts: [][2]string{{"a", "1"}}, get: "a", want: "1"},
			{desc: "update replaces", puts: [][2]string{{"b", "old"}, {"b", "new"}}, get: "b", want: "new"},
			{desc: "empty value", puts: [][2]string{{"c", ""}}, get: "c", want: ""},
			{desc: "JSON document", puts: [][2]string{{"d", `{"name":"é","n":[1,2]}`}}, get: "d", want: `{"name":"é","n":[1,2]}`},
			{desc: "other key untouched", puts: [][2]string{{"e", "1"}, {"f", "2"}}, get: "e", want: "1"},
			{desc: "keys are case-sensitive", puts: [][2]string{{"G", "1"}}, get: "g", wantErr: store.ErrNotFound},
		}
		for _, tt := range tests {
			t.Run(tt.desc, func(t *testing.T) {
				for _, kv := range tt.puts {
					if err := db.PutSetting(t.Context(), kv[0], kv[1]); err != nil {
						t.Fatalf("PutSetting(%q): %v", kv[0], err)
					}
				}
				got, err := db.GetSetting(t.Context(), tt.get)
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("GetSetting(%q) error = %v, want %v", tt.get, err, tt.wantErr)
				}
				if diff := cmp.Diff(got, tt.want); diff != "" {
					t.Errorf("GetSetting(%q) (-got, +want):\n%s", tt.get, diff)
				}
			})
		}
	})
}

func TestPutSettingStampsTime(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		before := time.Now().Unix()
		if err := db.PutSetting(t.Context(), "k", "v"); err != nil {
			t.Fatal(err)
		}
		var got int64
		if err := db.Reader().QueryRowContext(t.Context(), `SELECT updated_at FROM settings WHERE key = $1`, "k").Scan(&got); err != nil {
			t.Fatal(err)
		}
		if after := time.Now().Unix(); got < before || got > after {
			t.Errorf("updated_at = %d, want within [%d, %d]", got, before, after)
		}
	})
}

func TestSwapSetting(t *testing.T) {
	str := func(s string) *string { return &s }
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tests := []struct {
			desc    string
			put     *string // stored before the swap (nil: no row)
			old     *string
			value   string
			wantErr error
			want    string // value under the key after the swap
		}{
			{desc: "absent, expected absent: stored", old: nil, value: "1", want: "1"},
			{desc: "absent, expected a value: conflict", old: str("0"), value: "1", wantErr: store.ErrConflict, want: ""},
			{desc: "present, expected absent: conflict", put: str("0"), old: nil, value: "1", wantErr: store.ErrConflict, want: "0"},
			{desc: "present and unchanged: stored", put: str("0"), old: str("0"), value: "1", want: "1"},
			{desc: "present and changed: conflict", put: str("2"), old: str("0"), value: "1", wantErr: store.ErrConflict, want: "2"},
			{desc: "same value again: stored", put: str("0"), old: str("0"), value: "0", want: "0"},
		}
		for i, tt := range tests {
			t.Run(tt.desc, func(t *testing.T) {
				key := "swap" + string(rune('a'+i))
				if tt.put != nil {
					if err := db.PutSetting(t.Context(), key, *tt.put); err != nil {
						t.Fatal(err)
					}
				}
				err := db.InTx(t.Context(), func(tx *store.Tx) error { return tx.SwapSetting(t.Context(), key, tt.old, tt.value) })
				if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
					t.Fatalf("SwapSetting error = %v, want %v", err, tt.wantErr)
				}
				got, err := db.GetSetting(t.Context(), key)
				if err != nil && !errors.Is(err, store.ErrNotFound) {
					t.Fatal(err)
				}
				if got != tt.want {
					t.Errorf("value after swap = %q, want %q", got, tt.want)
				}
			})
		}
	})
}
