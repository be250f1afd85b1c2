package cli

import (
	"crypto/x509"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"netmon/app/compliance"
)

// Exit codes of `netmon compliance verify`, beside the CLI's 0, 1 and 2.
const (
	// exitUnsealed: every record up to a seq verifies under a signed
	// checkpoint, the records after it are chained but signed by nothing.
	exitUnsealed = 3
)

// defaultMaxSize caps what an archive's evidence.json may decompress to:
// about a hundred million records, ten of the busiest days measured.
const defaultMaxSize = 32 << 30

// newComplianceCmd is `netmon compliance verify`: the auditor's offline
// check of an evidence bundle (issue 21). It needs nothing but the bundle
// and the public key(s): no hub, no database, no network.
func newComplianceCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "compliance", Short: "Compliance evidence tools"}
	var pubs []string
	var tsaCA string
	var quiet bool
	var maxSize int64
	verify := &cobra.Command{
		Use:   "verify BUNDLE",
		Short: "Verify an evidence bundle offline (.json, .zip or .tar.gz)",
		Long: `Recomputes every record's hash chain value, every hour's RFC 6962 Merkle root
(which proves each record's inclusion), the chain of checkpoints, every ed25519
signature (--pub, repeatable: give the rotated-out keys too) and every RFC 3161
timestamp token (its certificate chain to --tsa-ca). Only signed statements
decide: no unsigned field of the bundle is trusted.

Exit codes:
  0  every record is covered by a checkpoint signed with a given key, and all
     of it holds ("OK: ...")
  1  the bundle does not verify, or cannot be read: a record, hour or day is
     named ("FAILED: ..."); also when no record is covered by a signed
     checkpoint (a bundle nobody signed proves nothing), when an archive holds
     a name twice, and when a value or the archive exceeds its cap
  2  usage error (no --pub, unknown flag)
  3  the records up to a seq verify under signed checkpoints, the records
     after it are chained but signed by nothing ("UNSEALED: ..."): the hub's
     open hour, or records added after its last signature; rely only on
     the signed part, or download again once the hour is checkpointed`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(pubs) == 0 {
				return usageError{errors.New("--pub is required (the compliance.key.pub you were given)")}
			}
			if maxSize <= 0 {
				return usageError{errors.New("--max-size must be positive")}
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
			out := cmd.OutOrStdout()
			failed := func(err error) error {
				fmt.Fprintf(out, "FAILED: %v\n", err)
				return errors.New("evidence bundle does not verify")
			}
			b, err := openBundle(args[0], maxSize)
			if err != nil {
				return failed(err)
			}
			defer b.close()
			rep, err := compliance.Verify(b.r, opts)
			if opts.Progress != nil && rep.Records >= 1<<20 {
				fmt.Fprintln(errw)
			}
			var open *compliance.UnsealedError
			if err != nil && !errors.As(err, &open) {
				return failed(err)
			}
			if ferr := b.finish(); ferr != nil {
				return failed(ferr)
			}
			for _, w := range rep.Warnings {
				fmt.Fprintln(out, "note:", w)
			}
			if open != nil {
				fmt.Fprintf(out, "UNSEALED: %v\n", open)
				fmt.Fprintf(out, "signed: %d of %d records (seq %d to %d), %d hourly checkpoints, %d daily seals (%d timestamped) verified with %d key(s)\n",
					rep.Signed, rep.Records, rep.SignedThrough-rep.Signed+1, rep.SignedThrough, rep.Hourly, rep.Daily, rep.Stamped, len(opts.Keys))
				return exitError{exitUnsealed, fmt.Errorf("evidence bundle verifies only up to seq %d: its last %d records are signed by nothing", open.SignedThrough, open.Last-open.First+1)}
			}
			fmt.Fprintf(out, "OK: %d records, %d hourly checkpoints, %d daily seals (%d timestamped) verified with %d key(s)\n",
				rep.Records, rep.Hourly, rep.Daily, rep.Stamped, len(opts.Keys))
			return nil
		},
	}
	verify.Flags().StringArrayVar(&pubs, "pub", nil, "ed25519 public key PEM (repeatable)")
	verify.Flags().StringVar(&tsaCA, "tsa-ca", "", "PEM CA certificate(s) the timestamp authority must chain to")
	verify.Flags().BoolVar(&quiet, "quiet", false, "no progress output")
	verify.Flags().Int64Var(&maxSize, "max-size", defaultMaxSize, "bytes an archive's evidence.json may decompress to (refused beyond: an archive bomb)")
	cmd.AddCommand(verify)
	return cmd
}
