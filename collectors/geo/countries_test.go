package geo

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCountries(t *testing.T) {
	type answer struct {
		Name     string
		Lat, Lon float64
		OK       bool
	}
	tests := []struct {
		code string
		want answer
	}{
		{"US", answer{"United States", 38, -97, true}},
		{"DE", answer{"Germany", 51, 9, true}},
		{"TR", answer{"Türkiye", 39, 35, true}},
		{"JP", answer{"Japan", 36, 138, true}},
		{"BR", answer{"Brazil", -10, -55, true}},
		{"gb", answer{"United Kingdom", 54, -2, true}}, // case-insensitive
		{"XK", answer{"Kosovo", 42.666667, 21.166667, true}},
		{"ZZ", answer{}},
		{"", answer{}},
		{"USA", answer{}},
	}
	for _, tc := range tests {
		t.Run(tc.code, func(t *testing.T) {
			lat, lon, ok := Centroid(tc.code)
			got := answer{CountryName(tc.code), lat, lon, ok}
			if diff := cmp.Diff(got, tc.want); diff != "" {
				t.Errorf("(-got, +want):\n%s", diff)
			}
		})
	}
}

// TestCountryTable: every officially assigned ISO 3166-1 alpha-2 code
// (249) is there, with a name and coordinates on the globe.
func TestCountryTable(t *testing.T) {
	table := countryTable()
	if len(table) < 249 {
		t.Errorf("%d countries, want at least 249", len(table))
	}
	for code, c := range table {
		if !validCountry(code) || code != string([]byte{code[0] &^ 0x20, code[1] &^ 0x20}) {
			t.Errorf("bad code %q", code)
		}
		if c.name == "" || c.lat < -90 || c.lat > 90 || c.lon < -180 || c.lon > 180 {
			t.Errorf("%s: %+v", code, c)
		}
	}
}
