package auth

import (
	"context"
	"errors"
	"strings"

	"netmon/app/errs"
	"netmon/app/secret"
	"netmon/store"
)

// LoginRequest is the body of POST /api/login: {password} for the legacy
// bootstrap password, {username, password} for an RBAC user.
type LoginRequest struct {
	Username string `json:"username,omitempty"`
	Password string `json:"password"`
}

// Login checks credentials from client ip and opens a session. oldToken
// (the session cookie the browser still sent, if any) is revoked, so the
// session id always changes at login. Failures are throttled per address
// (429 for a minute after 5 failures) and per username (slowed, see
// accountLimit), and audited; throttled attempts are only counted (an
// attacker must not be able to flood the chain).
func (s *Service) Login(ctx context.Context, req LoginRequest, ip, oldToken string) (string, *Identity, error) {
	username := strings.ToLower(strings.TrimSpace(req.Username))
	ipKey := "ip:" + ip
	attempt, ok := s.throttle.Begin(ipKey)
	if !ok {
		s.metrics.logins.WithLabelValues("throttled").Inc()
		return "", nil, ErrThrottled
	}
	if username != "" {
		// The account's own limit slows, never locks out: see accountLimit.
		if wait, ok := s.accounts.admit(username, s.throttle.Failures(ipKey) > 0); !ok {
			attempt.Cancel()
			s.metrics.logins.WithLabelValues("throttled").Inc()
			return "", nil, accountThrottled(wait)
		}
	}
	id, err := s.checkCredentials(ctx, username, req.Password)
	if err != nil {
		if errs.KindOf(err) == errs.Unauthorized {
			attempt.Fail()
			if username != "" {
				s.accounts.fail(username)
			}
			s.metrics.logins.WithLabelValues("failed").Inc()
			who := store.AuditActor{Username: username, ActorType: string(ActorUser)}
			if username == "" {
				who = actorOf(s.bootstrapIdentity())
			}
			s.record(ctx, s.event(ctx, who, ActionLogin, "session", ResultError, err.Error(), nil, nil))
		} else {
			attempt.Cancel()
		}
		return "", nil, err
	}
	attempt.Succeed()
	if username != "" {
		s.accounts.succeed(username)
	}
	s.metrics.logins.WithLabelValues("ok").Inc()
	if oldToken != "" {
		_ = s.RevokeToken(ctx, oldToken)
	}
	tok, err := s.openSession(ctx, id, "")
	if err != nil {
		return "", nil, err
	}
	return tok, id, nil
}

// checkCredentials returns the identity or ErrBadCredentials /
// ErrLegacyDisabled. Every path for a username runs one bcrypt comparison,
// so timing does not tell an unknown name from a wrong password.
func (s *Service) checkCredentials(ctx context.Context, username, password string) (*Identity, error) {
	if username == "" {
		if s.cfg.Password == "" || !secret.Equal(password, s.cfg.Password) {
			return nil, ErrBadCredentials
		}
		rbac, err := s.db.EnabledAdminExists(ctx)
		if err != nil {
			return nil, err
		}
		if rbac {
			return nil, ErrLegacyDisabled
		}
		return s.bootstrapIdentity(), nil
	}
	u, err := s.db.GetUserByName(ctx, username)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	if err != nil || !u.Enabled || u.PasswordHash == "" {
		checkPassword("", password)
		return nil, ErrBadCredentials
	}
	if !checkPassword(u.PasswordHash, password) {
		return nil, ErrBadCredentials
	}
	return &Identity{Username: u.Username, Role: Role(u.Role), Site: u.Site, Actor: ActorUser, UserID: u.ID}, nil
}

// Logout ends the identity's session (cookie or bearer) at once.
func (s *Service) Logout(ctx context.Context, id *Identity) error {
	if id == nil || id.SessionHash == "" {
		return nil
	}
	if err := s.sessions.Delete(ctx, id.SessionHash); err != nil {
		return err
	}
	s.record(ctx, s.event(ctx, actorOf(id), ActionLogout, "session", ResultOK, "", nil, nil))
	return nil
}

// record appends an audit event that is not part of a privileged change
// (logins, logouts, denials): a failure is logged, the request goes on.
func (s *Service) record(ctx context.Context, ev store.AuditEvent) {
	ctx, cancel := detached(ctx)
	defer cancel()
	if _, err := s.db.AppendAudit(ctx, ev); err != nil {
		s.log.ErrorContext(ctx, "audit append failed", "action", ev.Action, "error", err)
	}
}
