package ai

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"netmon/app/ai/provider"
	"netmon/app/errs"
	"netmon/store"
)

// keyAD is the associated data a provider's key is sealed with: the
// row's id, so a blob copied to another row does not open.
func keyAD(id int64) []byte { return []byte("ai_providers/" + strconv.FormatInt(id, 10) + "/api_key") }

func errProviderNotFound(id int64) error { return errs.NotFoundf("AI provider %d not found", id) }

// providerOf is the API's view of a row: never the key.
func providerOf(p store.AIProvider) Provider {
	return Provider{ID: p.ID, Name: p.Name, Kind: p.Kind, BaseURL: p.BaseURL, DefaultModel: p.DefaultModel, Enabled: p.Enabled,
		HasKey: len(p.APIKey) > 0, IsLocal: p.IsLocal, NoThink: p.NoThink, MaxTokens: p.MaxTokens, Temperature: p.Temperature,
		Pseudonymise: p.Pseudonymise, CreatedTS: p.CreatedTS, UpdatedTS: p.UpdatedTS}
}

// ListProviders returns every provider (no key).
func (s *Service) ListProviders(ctx context.Context) ([]Provider, error) {
	rows, err := s.deps.DB.AIProviders(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Provider, len(rows))
	for i, r := range rows {
		out[i] = providerOf(r)
	}
	return out, nil
}

// validate checks a write body into row (its id, key and times apart),
// resolving the base URL for is_local and the egress lock.
func (s *Service) validate(ctx context.Context, in ProviderInput, row *store.AIProvider) error {
	in.Name = strings.TrimSpace(in.Name)
	if n := utf8.RuneCountInString(in.Name); n < 1 || n > 100 {
		return errs.InvalidField("name", "name: 1-100 characters")
	}
	kind := provider.Kind(in.Kind)
	if !slices.Contains(provider.Kinds, kind) {
		return errs.InvalidField("kind", "kind: one of cloud-a, cloud-b, local-a, local-b, compat")
	}
	if len(in.APIKey) > 4096 || strings.ContainsAny(in.APIKey, "\r\n") {
		return errs.InvalidField("api_key", "api_key: at most 4096 characters on one line")
	}
	// New checks the URL's shape (scheme, no user info, query or
	// fragment) exactly as it will be used; no request is made.
	if _, err := provider.New(kind, in.BaseURL, "", provider.Options{}); err != nil {
		return errs.InvalidField("base_url", "base_url: %s", strings.TrimPrefix(err.Error(), provider.ErrConfig.Error()+": "))
	}
	if len(in.DefaultModel) > 200 {
		return errs.InvalidField("default_model", "default_model: at most 200 characters")
	}
	if in.MaxTokens < 0 || in.MaxTokens > 32768 {
		return errs.InvalidField("max_tokens", "max_tokens: 0-32768")
	}
	if t := in.Temperature; t != nil && (math.IsNaN(*t) || *t < 0 || *t > 2) {
		return errs.InvalidField("temperature", "temperature: 0-2")
	}
	local, err := s.classify(ctx, in.BaseURL)
	if err != nil {
		return errs.InvalidField("base_url", "%s", err.Error())
	}
	pseudo := in.Pseudonymise == nil || *in.Pseudonymise
	if !pseudo && !local {
		return errs.InvalidField("pseudonymise", "pseudonymise: may be turned off only for a local provider (loopback, RFC 1918 or ULA address)")
	}
	row.Name, row.Kind, row.BaseURL, row.DefaultModel = in.Name, in.Kind, strings.TrimSpace(in.BaseURL), strings.TrimSpace(in.DefaultModel)
	row.Enabled = in.Enabled == nil || *in.Enabled
	row.NoThink, row.MaxTokens, row.Temperature, row.Pseudonymise, row.IsLocal = in.NoThink, in.MaxTokens, in.Temperature, pseudo, local
	return nil
}

// CreateProvider validates and stores a provider, its key sealed with
// the new id, with its audit record ai.provider.create (key masked: the
// record holds has_key only) in one transaction.
func (s *Service) CreateProvider(ctx context.Context, who store.AuditActor, in ProviderInput) (Provider, error) {
	var row store.AIProvider
	if err := s.validate(ctx, in, &row); err != nil {
		return Provider{}, err
	}
	if in.APIKey != "" && s.deps.Vault == nil {
		return Provider{}, errs.Unavailablef(0, "the vault is not available: a provider key cannot be stored")
	}
	now := s.deps.Now().Unix()
	row.CreatedTS, row.UpdatedTS = now, now
	err := s.deps.DB.InTx(ctx, func(tx *store.Tx) error {
		id, err := tx.InsertAIProvider(ctx, row)
		if err != nil {
			return err
		}
		row.ID = id
		if in.APIKey != "" {
			if row.APIKey, err = s.deps.Vault.Seal([]byte(in.APIKey), keyAD(id)); err != nil {
				return fmt.Errorf("seal provider key: %w", err)
			}
			if err := tx.SetAIProviderKey(ctx, id, row.APIKey); err != nil {
				return err
			}
		}
		_, err = tx.AppendAudit(ctx, s.deps.Auditor.Event(ctx, who, ActionProviderCreate, providerTarget(id), "ok", "", nil, providerOf(row)))
		return err
	})
	if errors.Is(err, store.ErrConflict) {
		return Provider{}, errs.Conflictf("an AI provider named %q exists", row.Name)
	}
	if err != nil {
		return Provider{}, err
	}
	return providerOf(row), nil
}

func providerTarget(id int64) string { return "ai/providers/" + strconv.FormatInt(id, 10) }

// UpdateProvider rewrites provider id; an empty api_key keeps the
// stored key (spec 4.5). Audited ai.provider.update with before/after.
func (s *Service) UpdateProvider(ctx context.Context, who store.AuditActor, id int64, in ProviderInput) (Provider, error) {
	before, err := s.deps.DB.AIProvider(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return Provider{}, errProviderNotFound(id)
	}
	if err != nil {
		return Provider{}, err
	}
	row := before
	if err := s.validate(ctx, in, &row); err != nil {
		return Provider{}, err
	}
	if in.APIKey != "" && s.deps.Vault == nil {
		return Provider{}, errs.Unavailablef(0, "the vault is not available: a provider key cannot be stored")
	}
	row.UpdatedTS = max(s.deps.Now().Unix(), before.UpdatedTS+1) // a new client is built for the new settings
	err = s.deps.DB.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.UpdateAIProvider(ctx, row); err != nil {
			return err
		}
		if in.APIKey != "" {
			var err error
			if row.APIKey, err = s.deps.Vault.Seal([]byte(in.APIKey), keyAD(id)); err != nil {
				return fmt.Errorf("seal provider key: %w", err)
			}
			if err := tx.SetAIProviderKey(ctx, id, row.APIKey); err != nil {
				return err
			}
		}
		detail := ""
		if in.APIKey != "" {
			detail = "api_key replaced"
		}
		_, err := tx.AppendAudit(ctx, s.deps.Auditor.Event(ctx, who, ActionProviderUpdate, providerTarget(id), "ok", detail, providerOf(before), providerOf(row)))
		return err
	})
	switch {
	case errors.Is(err, store.ErrConflict):
		return Provider{}, errs.Conflictf("an AI provider named %q exists", row.Name)
	case errors.Is(err, store.ErrNotFound):
		return Provider{}, errProviderNotFound(id)
	case err != nil:
		return Provider{}, err
	}
	s.forget(id)
	return providerOf(row), nil
}

// DeleteProvider deletes provider id (its conversations stay, readable;
// new turns need another provider). Audited ai.provider.delete.
func (s *Service) DeleteProvider(ctx context.Context, who store.AuditActor, id int64) error {
	before, err := s.deps.DB.AIProvider(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return errProviderNotFound(id)
	}
	if err != nil {
		return err
	}
	err = s.deps.DB.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.DeleteAIProvider(ctx, id); err != nil {
			return err
		}
		_, err := tx.AppendAudit(ctx, s.deps.Auditor.Event(ctx, who, ActionProviderDelete, providerTarget(id), "ok", "", providerOf(before), nil))
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return errProviderNotFound(id)
	}
	s.forget(id)
	return err
}

func (s *Service) forget(id int64) {
	s.mu.Lock()
	delete(s.clients, id)
	s.mu.Unlock()
}

// client returns the provider's client, built once per version of its
// row: the key opened from the vault, every connection through the
// egress lock.
func (s *Service) client(p store.AIProvider) (provider.Client, error) {
	s.mu.Lock()
	c, ok := s.clients[p.ID]
	s.mu.Unlock()
	if ok && c.updated == p.UpdatedTS {
		return c.client, nil
	}
	key := ""
	if len(p.APIKey) > 0 {
		if s.deps.Vault == nil {
			return nil, errs.Unavailablef(0, "the vault is not available: provider %q's key does not open", p.Name)
		}
		pt, err := s.deps.Vault.Open(p.APIKey, keyAD(p.ID))
		if err != nil {
			return nil, errs.Unavailablef(0, "provider %q's key does not open with this hub's vault key", p.Name)
		}
		key = string(pt)
	}
	cl, err := provider.New(provider.Kind(p.Kind), p.BaseURL, key, provider.Options{HTTPClient: s.httpClient(p.IsLocal),
		Timeout: s.cfg.CallTimeout, FirstByteTimeout: s.cfg.FirstByteTimeout, IdleTimeout: s.cfg.IdleTimeout})
	if err != nil {
		return nil, errs.Unavailablef(0, "provider %q: %s", p.Name, err.Error())
	}
	s.mu.Lock()
	s.clients[p.ID] = cachedClient{updated: p.UpdatedTS, client: cl}
	s.mu.Unlock()
	return cl, nil
}

// usable says why a provider cannot answer now ("" when it can).
func (s *Service) usable(p store.AIProvider) string {
	switch {
	case !p.Enabled:
		return "disabled"
	case !p.IsLocal && !s.cfg.AllowCloud:
		return "a cloud provider while -ai-allow-cloud=false"
	}
	return ""
}

// TestProvider lists the provider's models and times it: {ok, latency_ms,
// models} or {ok:false, error} with the class of failure, never the
// remote body.
func (s *Service) TestProvider(ctx context.Context, id int64) (ProviderTest, error) {
	p, err := s.deps.DB.AIProvider(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return ProviderTest{}, errProviderNotFound(id)
	}
	if err != nil {
		return ProviderTest{}, err
	}
	if why := s.usable(p); why != "" && p.Enabled {
		return ProviderTest{OK: false, Error: "refused: " + why}, nil
	}
	cl, err := s.client(p)
	if err != nil {
		return ProviderTest{OK: false, Error: err.Error()}, nil
	}
	start := time.Now()
	tctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	models, err := cl.Models(tctx)
	if err != nil {
		return ProviderTest{OK: false, Error: err.Error()}, nil
	}
	if models == nil {
		models = []string{}
	}
	return ProviderTest{OK: true, LatencyMS: max(math.Round(float64(time.Since(start).Microseconds())/10)/100, 0.01), Models: models}, nil
}

// Models lists the provider's models; a failure is 502 with its class.
func (s *Service) Models(ctx context.Context, id int64) ([]string, error) {
	t, err := s.TestProvider(ctx, id)
	if err != nil {
		return nil, err
	}
	if !t.OK {
		return nil, errs.Unavailablef(0, "models of AI provider %d: %s", id, t.Error)
	}
	return t.Models, nil
}

// seed stores the bootstrap provider of -llm-* once, into an empty
// table (an admin who deleted every provider gets it back at the next
// start; one who kept another never does).
func (s *Service) seed(ctx context.Context) error {
	if strings.TrimSpace(s.cfg.LLMBaseURL) == "" {
		return nil
	}
	var row store.AIProvider
	in := ProviderInput{Name: "bootstrap (-llm-base-url)", Kind: s.cfg.LLMKind, BaseURL: s.cfg.LLMBaseURL, APIKey: s.cfg.LLMAPIKey, DefaultModel: s.cfg.LLMModel}
	if err := s.validate(ctx, in, &row); err != nil {
		return fmt.Errorf("-llm-base-url: %w", err)
	}
	if in.APIKey != "" && s.deps.Vault == nil {
		return errors.New("-llm-api-key: the vault is not available to seal it")
	}
	now := s.deps.Now().Unix()
	row.CreatedTS, row.UpdatedTS = now, now
	system := store.AuditActor{Username: "bootstrap", ActorType: "system"}
	return s.deps.DB.InTx(ctx, func(tx *store.Tx) error {
		id, err := tx.SeedAIProvider(ctx, row)
		if err != nil || id == 0 {
			return err
		}
		row.ID = id
		if in.APIKey != "" {
			if row.APIKey, err = s.deps.Vault.Seal([]byte(in.APIKey), keyAD(id)); err != nil {
				return fmt.Errorf("seal provider key: %w", err)
			}
			if err := tx.SetAIProviderKey(ctx, id, row.APIKey); err != nil {
				return err
			}
		}
		_, err = tx.AppendAudit(ctx, s.deps.Auditor.Event(ctx, system, ActionProviderCreate, providerTarget(id), "ok", "seeded from -llm-base-url", nil, providerOf(row)))
		return err
	})
}

// Status is GET /api/v1/ai/status: {enabled:false} when off.
func (s *Service) Status(ctx context.Context) (Status, error) {
	if !s.Enabled() {
		return Status{Enabled: false}, nil
	}
	list, err := s.ListProviders(ctx)
	if err != nil {
		return Status{}, err
	}
	st := Status{Enabled: true, Providers: list, AllowCloud: s.cfg.AllowCloud, MaxContextKB: s.cfg.MaxContextKB}
	if p, ok := s.defaultProvider(list); ok {
		st.DefaultProvider, st.DefaultModel, st.HasReadyProvider = p.ID, p.DefaultModel, true
	}
	return st, nil
}

// defaultProvider is the first enabled provider usable under the lock.
func (s *Service) defaultProvider(list []Provider) (Provider, bool) {
	for _, p := range list {
		if p.Enabled && (p.IsLocal || s.cfg.AllowCloud) {
			return p, true
		}
	}
	return Provider{}, false
}
