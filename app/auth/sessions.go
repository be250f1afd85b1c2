package auth

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"netmon/store"
)

// SessionStore keeps sessions by the SHA-256 of their token. The memory
// store serves one hub; the database store (-session-store=db) lets several
// hubs share sessions so that a logout anywhere applies everywhere at once.
type SessionStore interface {
	Create(ctx context.Context, s store.Session) error
	// Get returns the session or an error wrapping store.ErrNotFound.
	Get(ctx context.Context, hash string) (store.Session, error)
	Delete(ctx context.Context, hash string) error
	DeleteUser(ctx context.Context, userID int64) error
	// Sweep removes sessions expired before now (Unix seconds).
	Sweep(ctx context.Context, now int64) (int64, error)
}

// memorySessions is the default store: a map guarded by a mutex.
type memorySessions struct {
	mu sync.RWMutex
	m  map[string]store.Session
}

func newMemorySessions() *memorySessions { return &memorySessions{m: map[string]store.Session{}} }

func (s *memorySessions) Create(_ context.Context, sess store.Session) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[sess.TokenHash] = sess
	return nil
}

func (s *memorySessions) Get(_ context.Context, hash string) (store.Session, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	sess, ok := s.m[hash]
	if !ok {
		return store.Session{}, fmt.Errorf("get session: %w", store.ErrNotFound)
	}
	return sess, nil
}

func (s *memorySessions) Delete(_ context.Context, hash string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, hash)
	return nil
}

func (s *memorySessions) DeleteUser(_ context.Context, userID int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for h, sess := range s.m {
		if sess.UserID == userID {
			delete(s.m, h)
		}
	}
	return nil
}

func (s *memorySessions) Sweep(_ context.Context, now int64) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var n int64
	for h, sess := range s.m {
		if sess.ExpiresAt < now {
			delete(s.m, h)
			n++
		}
	}
	return n, nil
}

// SessionDB is what the database session store needs; *store.DB has it.
type SessionDB interface {
	CreateSession(ctx context.Context, s store.Session) error
	GetSession(ctx context.Context, hash string) (store.Session, error)
	DeleteSession(ctx context.Context, hash string) error
	DeleteUserSessions(ctx context.Context, userID int64) error
	DeleteExpiredSessions(ctx context.Context, now int64) (int64, error)
}

type dbSessions struct{ db SessionDB }

func (s dbSessions) Create(ctx context.Context, sess store.Session) error {
	return s.db.CreateSession(ctx, sess)
}
func (s dbSessions) Get(ctx context.Context, hash string) (store.Session, error) {
	return s.db.GetSession(ctx, hash)
}
func (s dbSessions) Delete(ctx context.Context, hash string) error {
	return s.db.DeleteSession(ctx, hash)
}
func (s dbSessions) DeleteUser(ctx context.Context, id int64) error {
	return s.db.DeleteUserSessions(ctx, id)
}
func (s dbSessions) Sweep(ctx context.Context, now int64) (int64, error) {
	return s.db.DeleteExpiredSessions(ctx, now)
}

// NewSessionStore returns the store named by kind ("memory" or "db").
func NewSessionStore(kind string, db SessionDB) (SessionStore, error) {
	switch kind {
	case "", "memory":
		return newMemorySessions(), nil
	case "db":
		if db == nil {
			return nil, errors.New("session store db: no database")
		}
		return dbSessions{db}, nil
	}
	return nil, fmt.Errorf("session store %q: want memory or db", kind)
}
