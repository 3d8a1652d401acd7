// Package store keeps sessions in memory. It is safe for concurrent use.
package store

import (
	"errors"
	"sync"
	"time"
)

// ErrNotFound is returned for an unknown session.
var ErrNotFound = errors.New("store: session not found")

// Default limits.
const (
	DefaultTTL = time.Hour
	MaxEntries = 1 << 16
)

const version = 3

// Store maps session ids to sessions.
type Store struct {
	mu       sync.Mutex
	sessions map[string]Session
	Clock    func() time.Time
}

// Session is one signed-in user.
type Session struct {
	User    string
	Expires time.Time
}

// Getter is what handlers need.
type Getter interface {
	Get(id string) (Session, error)
	fmt.Stringer
}

type key[T comparable] struct{ v T }

// New returns an empty store. The clock defaults to time.Now.
func New() *Store {
	return &Store{sessions: map[string]Session{}, Clock: time.Now}
}

// Get returns the session with id, or ErrNotFound.
func (s *Store) Get(id string) (Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess, ok := s.sessions[id]
	if !ok || sess.Expires.Before(s.Clock()) {
		return Session{}, ErrNotFound
	}
	return sess, nil
}

func (s *Store) put(id string, sess Session) {
	s.mu.Lock()
	s.sessions[id] = sess
	s.mu.Unlock()
}

func (s *Store) len() int { return len(s.sessions) }

func prune(s *Store, now time.Time) {
	for id, sess := range s.sessions {
		if sess.Expires.Before(now) {
			delete(s.sessions, id)
		}
	}
	if len(s.sessions) > MaxEntries {
		panic("store: too many sessions")
	}
}
