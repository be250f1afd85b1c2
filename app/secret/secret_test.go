package secret

import (
	"strings"
	"testing"
)

func TestNew(t *testing.T) {
	tests := []struct {
		desc, prefix string
	}{
		{"no prefix (sessions, the static enroll secret)", ""},
		{"API token", "bnt_"},
		{"enroll token", "ent_"},
	}
	for _, tt := range tests {
		a, b := New(tt.prefix), New(tt.prefix)
		if !strings.HasPrefix(a, tt.prefix) || len(a) != len(tt.prefix)+2*Bytes {
			t.Errorf("%s: New = %q, want %q and %d hex characters", tt.desc, a, tt.prefix, 2*Bytes)
		}
		if strings.Trim(a[len(tt.prefix):], "0123456789abcdef") != "" {
			t.Errorf("%s: New = %q is not lower-case hex after the prefix", tt.desc, a)
		}
		if a == b {
			t.Errorf("%s: two tokens are equal: %q", tt.desc, a)
		}
	}
}

func TestHash(t *testing.T) {
	// sha256("abc"), FIPS 180-2 appendix B.1.
	if got, want := Hash("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"; got != want {
		t.Errorf("Hash(abc) = %s, want %s", got, want)
	}
}

func TestEqual(t *testing.T) {
	tests := []struct {
		desc, a, b string
		want       bool
	}{
		{"same", "s3cret", "s3cret", true},
		{"different", "s3cret", "s3cre7", false},
		{"prefix", "s3cret", "s3cretX", false},
		{"empty against set", "", "s3cret", false},
		{"both empty", "", "", true},
	}
	for _, tt := range tests {
		if got := Equal(tt.a, tt.b); got != tt.want {
			t.Errorf("%s: Equal(%q, %q) = %v, want %v", tt.desc, tt.a, tt.b, got, tt.want)
		}
	}
}
