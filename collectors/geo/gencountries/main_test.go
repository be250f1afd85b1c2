package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func writeTgz(t *testing.T, path string, members map[string]string) {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, data := range members {
		if err := tw.WriteHeader(&tar.Header{Name: "package/" + name, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestRun(t *testing.T) {
	tests := []struct {
		desc      string
		countries string
		want      string // the CSV after the # header; "" = an error
	}{
		{"sorted by code, names with commas quoted",
			`[{"cca2":"TR","name":{"common":"Türkiye"},"latlng":[39,35]},
			  {"cca2":"BQ","name":{"common":"Caribbean Netherlands"},"latlng":[12.18,-68.25]},
			  {"cca2":"KR","name":{"common":"Korea, South"},"latlng":[37,127.5]}]`,
			"code,name,lat,lon\nBQ,Caribbean Netherlands,12.18,-68.25\nKR,\"Korea, South\",37,127.5\nTR,Türkiye,39,35\n"},
		{"an entry without coordinates is an error", `[{"cca2":"XX","name":{"common":"X"},"latlng":[]}]`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			cache := t.TempDir()
			out := filepath.Join(t.TempDir(), "countries.csv")
			writeTgz(t, filepath.Join(cache, "world-countries-5.1.0.tgz"), map[string]string{
				"countries.json": tc.countries, "package.json": `{"version":"5.1.0"}`,
			})
			err := run(cache, out)
			if tc.want == "" {
				if err == nil {
					t.Fatal("no error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			var body []string
			for _, line := range strings.SplitAfter(string(data), "\n") {
				if !strings.HasPrefix(line, "#") {
					body = append(body, line)
				}
			}
			if !strings.Contains(string(data), "world-countries 5.1.0") || !strings.Contains(string(data), "ODbL") {
				t.Errorf("provenance header missing:\n%s", data)
			}
			if diff := cmp.Diff(strings.Join(body, ""), tc.want); diff != "" {
				t.Errorf("(-got, +want):\n%s", diff)
			}
		})
	}
	if err := run(t.TempDir(), filepath.Join(t.TempDir(), "x.csv")); err == nil || !strings.Contains(err.Error(), "npm pack") {
		t.Errorf("empty cache: error %v", err)
	}
}
