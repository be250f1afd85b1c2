package compliance

import (
	"context"
	"encoding/hex"
	"errors"
	"net/url"
	"time"

	"netmon/store"
)

// Status is GET /api/v1/compliance/status (spec 2.12).
type Status struct {
	Config StatusConfig `json:"config"`
	// Records is the number of records stored (within retention).
	Records int64 `json:"records"`
	// LastRecordTS is when the last record was appended, Unix seconds (0: none).
	LastRecordTS int64         `json:"last_record_ts"`
	LastHourly   *StatusHourly `json:"last_hourly,omitempty"`
	LastDaily    *StatusDaily  `json:"last_daily,omitempty"`
	// WORMErrors counts failed writes to -worm-dir since start; WORMError
	// is the last one ("" none).
	WORMErrors int64  `json:"worm_errors"`
	WORMError  string `json:"worm_error"`
	// TimeDrift is true while the last checkpoint's clock is ahead of the
	// system clock (the time_drift alert).
	TimeDrift bool `json:"time_drift"`
}

// StatusConfig is the configuration as the status shows it.
type StatusConfig struct {
	Enabled       bool   `json:"enabled"`
	TSAURL        string `json:"tsa_url" doc:"without any user:password part"`
	WORMDir       string `json:"worm_dir"`
	MaskPII       bool   `json:"mask_pii"`
	RetentionDays int    `json:"retention_days"`
	// KeyID names the signing key in statements; PublicKey is its PEM
	// (the private half never leaves the hub).
	KeyID     string `json:"key_id"`
	PublicKey string `json:"public_key"`
}

// StatusHourly is the last hourly checkpoint.
type StatusHourly struct {
	Hour     string `json:"hour" doc:"RFC 3339 start of the hour, UTC"`
	Size     uint64 `json:"size" doc:"records of the day's tree up to the hour's end"`
	Last     uint64 `json:"last_seq"`
	Root     string `json:"root" doc:"RFC 6962 root, hex"`
	SignedAt int64  `json:"signed_at"`
	KeyID    string `json:"key_id"`
}

// StatusDaily is the last daily seal.
type StatusDaily struct {
	Day       string `json:"day"`
	Size      uint64 `json:"size"`
	Root      string `json:"root"`
	SignedAt  int64  `json:"signed_at"`
	TSAStatus string `json:"tsa_status" doc:"ok, none or error:<message>"`
	WORM      string `json:"worm" doc:"ok, error:<message>, or empty without -worm-dir"`
}

// Status reads the log's state.
func (s *Service) Status(ctx context.Context) (Status, error) {
	st := Status{Config: StatusConfig{Enabled: s.cfg.Enabled, TSAURL: redactURL(s.cfg.TSAURL), WORMDir: s.cfg.WORMDir,
		MaskPII: s.cfg.MaskPII, RetentionDays: s.cfg.RetentionDays},
		WORMErrors: s.wormErrs.Load(), WORMError: s.lastWORM.Load().(string), TimeDrift: s.drift.Load()}
	if pub := s.PublicKey(); pub != nil {
		st.Config.KeyID, st.Config.PublicKey = KeyID(pub), string(PublicPEM(pub))
	}
	db := s.deps.DB
	var err error
	if st.Records, err = db.ComplianceCount(ctx); err != nil {
		return st, err
	}
	if head, err := db.ComplianceHead(ctx); err == nil {
		st.LastRecordTS = head.At
	} else if !errors.Is(err, store.ErrNotFound) {
		return st, err
	}
	if c, err := db.LastComplianceCheckpoint(ctx, "hourly"); err == nil {
		if p, perr := ParseStatement(c.Body); perr == nil {
			st.LastHourly = &StatusHourly{Hour: time.Unix(p.Period, 0).UTC().Format(time.RFC3339), Size: p.Size, Last: p.Last,
				Root: hex.EncodeToString(p.Root[:]), SignedAt: p.Time, KeyID: p.Key}
		}
	} else if !errors.Is(err, store.ErrNotFound) {
		return st, err
	}
	if c, err := db.LastComplianceCheckpoint(ctx, "daily"); err == nil {
		if p, perr := ParseStatement(c.Body); perr == nil {
			st.LastDaily = &StatusDaily{Day: p.Day, Size: p.Size, Root: hex.EncodeToString(p.Root[:]), SignedAt: p.Time,
				TSAStatus: c.TSAStatus, WORM: c.WORM}
		}
	} else if !errors.Is(err, store.ErrNotFound) {
		return st, err
	}
	return st, nil
}

// MaskDefault is -mask-pii.
func (s *Service) MaskDefault() bool { return s.cfg.MaskPII }

func redactURL(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.User == nil {
		return u
	}
	p.User = nil
	return p.String()
}
