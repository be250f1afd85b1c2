package compliance

import (
	"bytes"
	"context"
	"crypto"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/digitorus/pkcs7"
	"github.com/digitorus/timestamp"
)

// sealed is called by the writer after a daily seal is stored: the day's
// files go to the WORM directory and the stamper is woken.
func (s *Service) sealed(ctx context.Context, id int64, st Statement) {
	worm := ""
	if s.cfg.WORMDir != "" {
		worm = "ok"
		if err := s.writeWORMDay(ctx, st); err != nil {
			worm = "error:" + err.Error()
		}
		if err := s.deps.DB.SetComplianceStamp(ctx, id, nil, initialStatus(s.cfg.TSAURL), worm); err != nil {
			s.log.Warn("record worm state", "err", err)
		}
	}
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

func initialStatus(url string) string {
	if url == "" {
		return "none"
	}
	return "error:pending"
}

// stamper asks the TSA for the stamps of the seals that have none yet,
// again every StampRetry until each succeeds.
func (s *Service) stamper(ctx context.Context) {
	if s.cfg.TSAURL == "" {
		return
	}
	t := time.NewTicker(s.cfg.StampRetry)
	defer t.Stop()
	for {
		s.stampPending(ctx)
		select {
		case <-ctx.Done():
			return
		case <-s.kick:
		case <-t.C:
		}
	}
}

// stampPending makes one attempt for every pending seal.
func (s *Service) stampPending(ctx context.Context) {
	seals, err := s.deps.DB.PendingComplianceStamps(ctx)
	if err != nil {
		s.log.Warn("list pending stamps", "err", err)
		return
	}
	for _, c := range seals {
		sum := sha256.Sum256([]byte(c.Body))
		tok, err := Stamp(ctx, s.deps.HTTPClient, s.cfg.TSAURL, sum[:])
		status := "ok"
		if err != nil {
			status = "error:" + err.Error()
			s.m.stamps.WithLabelValues("error").Inc()
		} else {
			s.m.stamps.WithLabelValues("ok").Inc()
			if s.cfg.WORMDir != "" {
				if werr := s.wormFile(time.Unix(c.Period, 0).UTC(), "seal.tsr", tok); werr != nil {
					c.WORM = "error:" + werr.Error()
				}
			}
		}
		if err := s.deps.DB.SetComplianceStamp(ctx, c.ID, tok, status, c.WORM); err != nil {
			s.log.Warn("record stamp", "err", err)
		}
	}
}

// Stamp asks the RFC 3161 service at url to timestamp the SHA-256 digest
// imprint, with a random nonce and the signer's certificate requested,
// and returns the DER TimeStampResp after checking its status, its
// signature, that it stamps exactly imprint and echoes the nonce.
func Stamp(ctx context.Context, client *http.Client, url string, imprint []byte) ([]byte, error) {
	nonce, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 64))
	if err != nil {
		return nil, err
	}
	treq := timestamp.Request{HashAlgorithm: crypto.SHA256, HashedMessage: imprint, Certificates: true, Nonce: nonce}
	req, err := treq.Marshal()
	if err != nil {
		return nil, fmt.Errorf("build stamp request: %w", err)
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(req))
	if err != nil {
		return nil, fmt.Errorf("stamp request: %w", err)
	}
	hreq.Header.Set("Content-Type", "application/timestamp-query")
	resp, err := client.Do(hreq)
	if err != nil {
		return nil, fmt.Errorf("stamp request: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("stamp reply: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("stamp reply: HTTP %d", resp.StatusCode)
	}
	if err := CheckStamp(body, imprint, nonce, nil); err != nil {
		return nil, err
	}
	return body, nil
}

// CheckStamp verifies a DER TimeStampResp: granted, signature valid,
// imprint equal, nonce equal (nil: not checked, as offline where the
// nonce is the token's own) and, when roots is given, the signer's chain
// to roots with the timeStamping usage.
func CheckStamp(resp, imprint []byte, nonce *big.Int, roots *x509.CertPool) error {
	ts, err := timestamp.ParseResponse(resp)
	if err != nil {
		return fmt.Errorf("stamp reply: %w", err)
	}
	if ts.HashAlgorithm != crypto.SHA256 || !bytes.Equal(ts.HashedMessage, imprint) {
		return errors.New("stamp reply: imprint differs from the seal's digest")
	}
	if nonce != nil && (ts.Nonce == nil || ts.Nonce.Cmp(nonce) != 0) {
		return errors.New("stamp reply: nonce differs from the request's")
	}
	if len(ts.Certificates) == 0 {
		return errors.New("stamp reply: no signer certificate")
	}
	if roots != nil {
		p7, err := pkcs7.Parse(ts.RawToken)
		if err != nil {
			return fmt.Errorf("stamp token: %w", err)
		}
		if err := p7.VerifyWithOpts(x509.VerifyOptions{Roots: roots, CurrentTime: ts.Time,
			KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageTimeStamping}}); err != nil {
			return fmt.Errorf("stamp token: certificate chain: %w", err)
		}
	}
	return nil
}

// StampCerts returns the certificates a token carries (the TSA chain
// added to evidence downloads).
func StampCerts(resp []byte) []*x509.Certificate {
	ts, err := timestamp.ParseResponse(resp)
	if err != nil {
		return nil
	}
	return ts.Certificates
}

// writeWORMDay writes a sealed day's statements under YYYY/MM/DD.
func (s *Service) writeWORMDay(ctx context.Context, seal Statement) error {
	day := time.Unix(seal.Period, 0).UTC()
	cps, err := s.deps.DB.ListComplianceCheckpoints(ctx, "", seal.Period, seal.Period+86400)
	if err != nil {
		return err
	}
	var lines bytes.Buffer
	enc := json.NewEncoder(&lines)
	for _, c := range cps {
		_ = enc.Encode(bundleCheckpoint(c))
	}
	// The first failure ends the day's writes: the next files would fail
	// the same way (directory missing, read-only or full).
	for _, f := range []struct {
		name string
		data []byte
	}{
		{"checkpoints.jsonl", lines.Bytes()},
		{"seal.txt", []byte(seal.Body())},
		{"compliance.key.pub", PublicPEM(s.PublicKey())},
	} {
		if err := s.wormFile(day, f.name, f.data); err != nil {
			return err
		}
	}
	return nil
}

// wormFile creates dir/YYYY/MM/DD/name exclusively (an existing file is an
// error, never replaced), syncs it and makes it read-only.
func (s *Service) wormFile(day time.Time, name string, data []byte) (err error) {
	defer func() {
		if err != nil {
			s.wormErrs.Add(1)
			s.m.wormErrors.Inc()
			s.lastWORM.Store(err.Error())
			s.log.Error("worm write", "err", err)
		}
	}()
	dir := filepath.Join(s.cfg.WORMDir, day.Format("2006"), day.Format("01"), day.Format("02"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("worm: %w", err)
	}
	path := filepath.Join(dir, name)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("worm: %w", err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("worm: write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("worm: sync %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("worm: close %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o444); err != nil {
		return fmt.Errorf("worm: %w", err)
	}
	return nil
}

// bundleCheckpoint is a statement as bundles and WORM files carry it.
func bundleCheckpoint(c storeCheckpoint) BundleCheckpoint {
	return BundleCheckpoint{Kind: c.Kind, Body: c.Body, Sig: base64.StdEncoding.EncodeToString(c.Sig),
		TSAStatus: c.TSAStatus, TSAToken: base64.StdEncoding.EncodeToString(c.TSAToken)}
}
