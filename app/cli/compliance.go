package cli

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"github.com/spf13/cobra"

	"netmon/app/compliance"
)

// newComplianceCmd is `netmon compliance verify`: the auditor's offline
// check of an evidence bundle (issue 21). It needs nothing but the bundle
// and the public key(s): no hub, no database, no network.
func newComplianceCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "compliance", Short: "Compliance evidence tools"}
	var pubs []string
	var tsaCA string
	var quiet bool
	verify := &cobra.Command{
		Use:   "verify BUNDLE",
		Short: "Verify an evidence bundle offline (.json, .zip or .tar.gz)",
		Long: `Recomputes every record's hash chain value, every hour's RFC 6962 Merkle root
(which proves each record's inclusion), the chain of checkpoints, every ed25519
signature (--pub, repeatable: give the rotated-out keys too) and every RFC 3161
timestamp token (its certificate chain to --tsa-ca). Exit code 0 only when all
of it holds; otherwise the first bad record, hour or day is named.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(pubs) == 0 {
				return usageError{errors.New("--pub is required (the compliance.key.pub you were given)")}
			}
			var opts compliance.VerifyOptions
			for _, p := range pubs {
				raw, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				k, err := compliance.ParsePublicPEM(raw)
				if err != nil {
					return fmt.Errorf("%s: %w", p, err)
				}
				opts.Keys = append(opts.Keys, k)
			}
			if tsaCA != "" {
				raw, err := os.ReadFile(tsaCA)
				if err != nil {
					return err
				}
				opts.TSARoots = x509.NewCertPool()
				if !opts.TSARoots.AppendCertsFromPEM(raw) {
					return fmt.Errorf("%s: no PEM certificate", tsaCA)
				}
			}
			errw := cmd.ErrOrStderr()
			if !quiet {
				opts.Progress = func(n uint64) { fmt.Fprintf(errw, "\rverified %d records…", n) }
			}
			r, closeFn, err := openBundle(args[0])
			if err != nil {
				return err
			}
			defer closeFn()
			rep, err := compliance.Verify(r, opts)
			if opts.Progress != nil && rep.Records >= 1<<20 {
				fmt.Fprintln(errw)
			}
			out := cmd.OutOrStdout()
			if err != nil {
				fmt.Fprintf(out, "FAILED: %v\n", err)
				return errors.New("evidence bundle does not verify")
			}
			for _, w := range rep.Warnings {
				fmt.Fprintln(out, "note:", w)
			}
			fmt.Fprintf(out, "OK: %d records, %d hourly checkpoints, %d daily seals (%d timestamped) verified with %d key(s)\n",
				rep.Records, rep.Hourly, rep.Daily, rep.Stamped, len(opts.Keys))
			return nil
		},
	}
	verify.Flags().StringArrayVar(&pubs, "pub", nil, "ed25519 public key PEM (repeatable)")
	verify.Flags().StringVar(&tsaCA, "tsa-ca", "", "PEM CA certificate(s) the timestamp authority must chain to")
	verify.Flags().BoolVar(&quiet, "quiet", false, "no progress output")
	cmd.AddCommand(verify)
	return cmd
}

// openBundle opens a bundle file: JSON as is, or evidence.json inside a
// .zip or .tar.gz download.
func openBundle(name string) (io.Reader, func(), error) {
	switch {
	case strings.HasSuffix(name, ".zip"):
		z, err := zip.OpenReader(name)
		if err != nil {
			return nil, nil, err
		}
		for _, f := range z.File {
			if path.Base(f.Name) == "evidence.json" {
				r, err := f.Open()
				if err != nil {
					z.Close()
					return nil, nil, err
				}
				return r, func() { r.Close(); z.Close() }, nil
			}
		}
		z.Close()
		return nil, nil, fmt.Errorf("%s: no evidence.json inside", name)
	case strings.HasSuffix(name, ".tar.gz"), strings.HasSuffix(name, ".tgz"):
		f, err := os.Open(name)
		if err != nil {
			return nil, nil, err
		}
		gz, err := gzip.NewReader(f)
		if err != nil {
			f.Close()
			return nil, nil, err
		}
		tr := tar.NewReader(gz)
		for {
			h, err := tr.Next()
			if err != nil {
				f.Close()
				return nil, nil, fmt.Errorf("%s: no evidence.json inside", name)
			}
			if path.Base(h.Name) == "evidence.json" {
				return tr, func() { f.Close() }, nil
			}
		}
	default:
		f, err := os.Open(name)
		if err != nil {
			return nil, nil, err
		}
		return f, func() { f.Close() }, nil
	}
}
