package auth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"netmon/app/panics"
	"netmon/app/secret"
	"netmon/store"
)

// Store is the persistence auth needs; *store.DB implements it.
type Store interface {
	SessionDB
	CountUsers(ctx context.Context) (int, error)
	EnabledAdminExists(ctx context.Context) (bool, error)
	GetUser(ctx context.Context, id int64) (store.User, error)
	GetUserByName(ctx context.Context, username string) (store.User, error)
	GetUserByOIDC(ctx context.Context, issuer, subject string) (store.User, error)
	ListUsers(ctx context.Context, site string) ([]store.User, error)
	APITokenByHash(ctx context.Context, hash string) (store.APIToken, error)
	ListAPITokens(ctx context.Context, site string) ([]store.APIToken, error)
	TouchAPIToken(ctx context.Context, id, ts int64) error
	InTx(ctx context.Context, fn func(*store.Tx) error) error
	AppendAudit(ctx context.Context, e store.AuditEvent) (store.AuditEvent, error)
}

// Service authenticates requests and manages users, tokens and sessions.
type Service struct {
	guard    *panics.Guard // a panic in one sweep: counted, the next sweep runs
	log      *slog.Logger
	cfg      Config
	db       Store
	auditor  Auditor
	sessions SessionStore
	throttle *Throttle
	accounts *accountLimit
	metrics  *metrics
	now      func() time.Time

	stop chan struct{}
	wg   sync.WaitGroup
}

// New returns the service; it does no I/O. auditor completes the audit
// records of its actions (app/audit.Builder).
func New(log *slog.Logger, cfg Config, db Store, auditor Auditor, reg prometheus.Registerer) (*Service, error) {
	sessions, err := NewSessionStore(cfg.SessionStore, db)
	if err != nil {
		return nil, err
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = SessionMaxAge * time.Second
	}
	if cfg.Throttle.MaxFailures == 0 {
		cfg.Throttle = DefaultThrottleConfig()
	}
	return &Service{
		guard: panics.New(reg, log, "auth"),
		log:   log, cfg: cfg, db: db, auditor: auditor, sessions: sessions,
		throttle: NewThrottle(cfg.Throttle, "login", reg),
		accounts: newAccountLimit(cfg.Accounts),
		metrics:  newMetrics(reg),
		now:      time.Now,
	}, nil
}

// MultiSite reports the mode.
func (s *Service) MultiSite() bool { return s.cfg.MultiSite }

// Start begins sweeping expired sessions and idle throttle entries.
func (s *Service) Start() error {
	if s.cfg.SweepInterval <= 0 {
		return nil
	}
	s.stop = make(chan struct{})
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		tick := time.NewTicker(s.cfg.SweepInterval)
		defer tick.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-tick.C:
				// A panic in one sweep is counted; the next one runs.
				_ = s.guard.Do(s.sweep)
			}
		}
	}()
	return nil
}

// Stop ends the sweeper.
func (s *Service) Stop() error {
	if s.stop != nil {
		close(s.stop)
		s.wg.Wait()
		s.stop = nil
	}
	return nil
}

func (s *Service) sweep() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n, err := s.sessions.Sweep(ctx, s.now().Unix())
	if err != nil {
		s.log.Warn("session sweep failed", "error", err)
	} else if n > 0 {
		s.log.Debug("expired sessions removed", "count", n)
	}
	s.throttle.Sweep()
	s.accounts.sweep()
}

// Required reports whether authentication is on: a legacy password is set
// or at least one RBAC user exists. Otherwise everything is open as admin.
func (s *Service) Required(ctx context.Context) (bool, error) {
	if s.cfg.Password != "" {
		return true, nil
	}
	n, err := s.db.CountUsers(ctx)
	if err != nil {
		return true, err // fail closed
	}
	return n > 0, nil
}

// SignIn says how people sign in to this hub, for the console's login
// form: whether any RBAC user exists (the form then asks for a username)
// and whether the legacy bootstrap password still signs anyone in (it is
// set and no enabled admin exists: spec section 3, "Legacy password
// login").
func (s *Service) SignIn(ctx context.Context) (rbacUsers, bootstrap bool, err error) {
	n, err := s.db.CountUsers(ctx)
	if err != nil {
		return false, false, err
	}
	if s.cfg.Password == "" {
		return n > 0, false, nil
	}
	admin, err := s.db.EnabledAdminExists(ctx)
	if err != nil {
		return false, false, err
	}
	return n > 0, !admin, nil
}

// OpenIdentity is the identity of every request while authentication is
// off: the admin of the legacy bootstrap (spec section 5 item 1).
func (s *Service) OpenIdentity() *Identity {
	id := s.bootstrapIdentity()
	id.Open = true
	return id
}

// bootstrapIdentity is who the legacy password (or authentication off)
// makes you: admin, and in multi-site mode global-admin, because the
// bootstrap must be able to create the first global-admin.
func (s *Service) bootstrapIdentity() *Identity {
	role := RoleAdmin
	if s.cfg.MultiSite {
		role = RoleGlobalAdmin
	}
	return &Identity{Username: "admin", Role: role, Actor: ActorLegacy}
}

// Credentials are what a request presented.
type Credentials struct {
	// Token is the bearer token or the session cookie's value.
	Token string
	// ViaCookie is true when it came from the cookie (CSRF applies).
	ViaCookie bool
}

// CredentialsOf extracts the bearer token, else the session cookie.
func CredentialsOf(r *http.Request) (Credentials, bool) {
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, tok, ok := strings.Cut(h, " ")
		if ok && strings.EqualFold(scheme, "Bearer") && strings.TrimSpace(tok) != "" {
			return Credentials{Token: strings.TrimSpace(tok)}, true
		}
		return Credentials{}, true // malformed Authorization: present but invalid
	}
	if c, err := r.Cookie(SessionCookie); err == nil && c.Value != "" {
		return Credentials{Token: c.Value, ViaCookie: true}, true
	}
	return Credentials{}, false
}

// Authenticate resolves credentials to an identity, or ErrUnauthenticated.
func (s *Service) Authenticate(ctx context.Context, cr Credentials) (*Identity, error) {
	switch {
	case strings.HasPrefix(cr.Token, apiTokenPrefix):
		return s.authToken(ctx, cr.Token)
	case looksLikeSessionToken(cr.Token):
		return s.authSession(ctx, cr.Token)
	}
	return nil, ErrUnauthenticated
}

func (s *Service) authToken(ctx context.Context, tok string) (*Identity, error) {
	k, err := s.db.APITokenByHash(ctx, secret.Hash(tok))
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrUnauthenticated
	}
	if err != nil {
		return nil, err
	}
	now := s.now().Unix()
	// last_used at one-minute resolution: a scraper polling every second
	// must not turn every read into a write.
	if now-k.LastUsed >= 60 {
		if err := s.db.TouchAPIToken(ctx, k.ID, now); err != nil {
			s.log.WarnContext(ctx, "token last-used update failed", "token_id", k.ID, "error", err)
		}
	}
	return &Identity{Username: "token:" + k.Name, Role: Role(k.Role), Site: k.Site, Actor: ActorToken, TokenID: k.ID}, nil
}

func (s *Service) authSession(ctx context.Context, tok string) (*Identity, error) {
	hash := secret.Hash(tok)
	sess, err := s.sessions.Get(ctx, hash)
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrUnauthenticated
	}
	if err != nil {
		return nil, err
	}
	if sess.ExpiresAt < s.now().Unix() {
		_ = s.sessions.Delete(ctx, hash)
		return nil, ErrUnauthenticated
	}
	id := &Identity{Username: sess.Username, Role: Role(sess.Role), Site: sess.Site, Actor: ActorType(sess.ActorType), UserID: sess.UserID, SessionHash: hash}
	if sess.UserID == 0 {
		// A legacy session ends when RBAC takes over.
		rbac, err := s.db.EnabledAdminExists(ctx)
		if err != nil {
			return nil, err
		}
		if rbac || s.cfg.Password == "" {
			return nil, ErrUnauthenticated
		}
		return id, nil
	}
	// Role, site and enabled are read live, so a change applies to
	// existing sessions at once.
	u, err := s.db.GetUser(ctx, sess.UserID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrUnauthenticated
	}
	if err != nil {
		return nil, err
	}
	if !u.Enabled {
		return nil, ErrUnauthenticated
	}
	id.Username, id.Role, id.Site = u.Username, Role(u.Role), u.Site
	return id, nil
}

// NewSession creates a session for id and returns its token.
func (s *Service) NewSession(ctx context.Context, id Identity) (string, error) {
	tok := secret.New("")
	now := s.now().Unix()
	err := s.sessions.Create(ctx, store.Session{
		TokenHash: secret.Hash(tok), UserID: id.UserID, Username: id.Username, Role: string(id.Role),
		Site: id.Site, ActorType: string(id.Actor), CreatedAt: now, ExpiresAt: now + int64(s.cfg.SessionTTL/time.Second),
	})
	if err != nil {
		return "", fmt.Errorf("create session: %w", err)
	}
	return tok, nil
}

// openSession starts a session for id and appends its login record, both
// or neither (RELIABILITY case 17, the hardening issue's second finding):
// with the database session store in one transaction; with the memory
// store the record is committed first and the session exists only once
// it is. It returns the token and sets id.SessionHash.
func (s *Service) openSession(ctx context.Context, id *Identity, detail string) (string, error) {
	tok := secret.New("")
	now := s.now().Unix()
	sess := store.Session{
		TokenHash: secret.Hash(tok), UserID: id.UserID, Username: id.Username, Role: string(id.Role),
		Site: id.Site, ActorType: string(id.Actor), CreatedAt: now, ExpiresAt: now + int64(s.cfg.SessionTTL/time.Second),
	}
	ev := s.event(ctx, actorOf(id), ActionLogin, "session", ResultOK, detail, nil, nil)
	if _, shared := s.sessions.(dbSessions); shared {
		err := s.db.InTx(ctx, func(tx *store.Tx) error {
			if err := tx.CreateSession(ctx, sess); err != nil {
				return err
			}
			_, err := tx.AppendAudit(ctx, ev)
			return err
		})
		if err != nil {
			return "", fmt.Errorf("open session: %w", err)
		}
	} else {
		if _, err := s.db.AppendAudit(ctx, ev); err != nil {
			return "", fmt.Errorf("open session: audit: %w", err)
		}
		if err := s.sessions.Create(ctx, sess); err != nil {
			return "", fmt.Errorf("open session: %w", err)
		}
	}
	id.SessionHash = sess.TokenHash
	return tok, nil
}

// RevokeToken ends the session of a presented token, if it is one.
func (s *Service) RevokeToken(ctx context.Context, tok string) error {
	if !looksLikeSessionToken(tok) {
		return nil
	}
	return s.sessions.Delete(ctx, secret.Hash(tok))
}

// actorOf turns an identity into the audit actor.
func actorOf(id *Identity) store.AuditActor {
	if id == nil {
		return store.AuditActor{}
	}
	return store.AuditActor{Username: id.Username, Role: string(id.Role), ActorType: string(id.Actor)}
}

// Denied records a refused request in the audit chain.
func (s *Service) Denied(ctx context.Context, id *Identity, perm Permission, route string) {
	ev := s.event(ctx, actorOf(id), ActionAccessDenied, route, ResultDenied, "permission "+string(perm)+" required", nil, nil)
	ctx, cancel := detached(ctx)
	defer cancel()
	if _, err := s.db.AppendAudit(ctx, ev); err != nil {
		s.log.ErrorContext(ctx, "audit append failed", "action", ActionAccessDenied, "error", err)
	}
}

// auditTimeout bounds an audit append that no longer follows its client.
const auditTimeout = 15 * time.Second

// detached is ctx without its cancellation (its values — request id,
// client address — stay), bounded by auditTimeout: a record of a denial or
// a failed login must not vanish because the client went away, also on
// read routes that app/api does not detach.
func detached(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), auditTimeout)
}
