package compliance

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/pem"
	"fmt"
	"io"
	"os"
	"time"
)

// Archive formats of an evidence download.
const (
	ArchiveZip   = "zip"
	ArchiveTarGz = "tar.gz"
)

// auditorReadme is the README.txt of a download.
const auditorReadme = `netmon compliance evidence
==========================

evidence.json       the bundle: records (logs), hourly checkpoints and daily
                    seals (checkpoints), each statement signed with ed25519;
                    daily seals carry an RFC 3161 timestamp token.
compliance.key.pub  the hub's public signing key (ed25519, PEM). Compare it
                    with the key you were given out of band: the bundle
                    proves nothing against a key it brings itself.
tsa-chain.pem       the certificates the timestamp authority sent (for
                    reference; verify against the TSA's CA you trust).

Verify offline:

    netmon compliance verify evidence.zip --pub compliance.key.pub --tsa-ca tsa-ca.pem

Exit code 0 means: every record hashes to its chain value, every hour's
Merkle root and every day's seal match the records, every signature holds,
every timestamp covers its seal, and every record is covered by a
checkpoint signed with the key you gave. Exit code 3 means: the records
up to the seq it names verify so, but the last ones are signed by nothing
yet (the hub's open hour, or records added after its last signature):
rely on the signed part only, or download again once the hour has ended.
Exit code 1 means the bundle does not verify (the first bad record, hour
or day is named), or nothing in it is signed. A masked bundle (masked: true) shows pseudonyms for
addresses, MACs and user names and carries the commitments of the real
values, so it verifies the same way.

The record encoding and the statement format are documented in the netmon
README, section "Compliance log".
`

// WriteArchive streams a .zip or .tar.gz download: evidence.json,
// compliance.key.pub, tsa-chain.pem and README.txt. A zip is streamed; a
// tar entry needs its size first, so the tar.gz form spools the bundle
// to a temporary file.
func (s *Service) WriteArchive(ctx context.Context, w io.Writer, format string, from, to time.Time, mask bool) error {
	if !s.cfg.Enabled {
		return errOff
	}
	chain, err := s.tsaChainPEM(ctx, from, to)
	if err != nil {
		return err
	}
	extra := []struct {
		name string
		data []byte
	}{{"compliance.key.pub", PublicPEM(s.PublicKey())}, {"tsa-chain.pem", chain}, {"README.txt", []byte(auditorReadme)}}
	now := s.deps.Now()
	switch format {
	case ArchiveZip:
		z := zip.NewWriter(w)
		f, err := z.CreateHeader(&zip.FileHeader{Name: "evidence.json", Method: zip.Deflate, Modified: now})
		if err != nil {
			return err
		}
		if err := s.Evidence(ctx, f, from, to, mask); err != nil {
			return err
		}
		for _, e := range extra {
			f, err := z.CreateHeader(&zip.FileHeader{Name: e.name, Method: zip.Deflate, Modified: now})
			if err != nil {
				return err
			}
			if _, err := f.Write(e.data); err != nil {
				return err
			}
		}
		return z.Close()
	case ArchiveTarGz:
		tmp, err := os.CreateTemp("", "netmon-evidence-*.json")
		if err != nil {
			return fmt.Errorf("evidence spool: %w", err)
		}
		defer os.Remove(tmp.Name())
		defer tmp.Close()
		if err := s.Evidence(ctx, tmp, from, to, mask); err != nil {
			return err
		}
		size, err := tmp.Seek(0, io.SeekCurrent)
		if err != nil {
			return err
		}
		if _, err := tmp.Seek(0, io.SeekStart); err != nil {
			return err
		}
		gz := gzip.NewWriter(w)
		tw := tar.NewWriter(gz)
		if err := tw.WriteHeader(&tar.Header{Name: "evidence.json", Mode: 0o444, Size: size, ModTime: now}); err != nil {
			return err
		}
		if _, err := io.Copy(tw, tmp); err != nil {
			return err
		}
		for _, e := range extra {
			if err := tw.WriteHeader(&tar.Header{Name: e.name, Mode: 0o444, Size: int64(len(e.data)), ModTime: now}); err != nil {
				return err
			}
			if _, err := tw.Write(e.data); err != nil {
				return err
			}
		}
		if err := tw.Close(); err != nil {
			return err
		}
		return gz.Close()
	}
	return fmt.Errorf("archive format %q: want zip or tar.gz", format)
}

// tsaChainPEM collects the distinct certificates of the range's tokens.
func (s *Service) tsaChainPEM(ctx context.Context, from, to time.Time) ([]byte, error) {
	cps, err := s.deps.DB.ListComplianceCheckpoints(ctx, "daily", from.Unix(), to.Unix()+86400)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	seen := map[string]bool{}
	for _, c := range cps {
		for _, cert := range StampCerts(c.TSAToken) {
			if !seen[string(cert.Raw)] {
				seen[string(cert.Raw)] = true
				_ = pem.Encode(&out, &pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw})
			}
		}
	}
	return out.Bytes(), nil
}
