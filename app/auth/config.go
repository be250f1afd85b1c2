package auth

import "time"

// Config configures authentication.
type Config struct {
	// Password is the legacy bootstrap password (-auth-password); empty
	// with no RBAC user means authentication is off.
	Password string
	// MultiSite makes site a hard boundary and enables the site-admin and
	// global-admin roles.
	MultiSite bool
	// SessionStore is "memory" (default) or "db".
	SessionStore string
	// SessionTTL is the session lifetime (604800 s).
	SessionTTL time.Duration
	// SweepInterval is how often expired sessions and idle throttle
	// entries are dropped.
	SweepInterval time.Duration
	// Throttle is the login failure policy per address.
	Throttle ThrottleConfig
	// Accounts is the login failure policy per username.
	Accounts AccountLimitConfig
}

// DefaultConfig returns the spec's defaults.
func DefaultConfig() Config {
	return Config{
		SessionStore:  "memory",
		SessionTTL:    SessionMaxAge * time.Second,
		SweepInterval: 10 * time.Minute,
		Throttle:      DefaultThrottleConfig(),
		Accounts:      DefaultAccountLimitConfig(),
	}
}
