package signin

import (
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain"
)

// Session is the session aggregate.
type Session struct {
	id        uuid.UUID
	started   bool
	accountID uuid.UUID
	ended     bool
	version   int64
}

// NewSession returns an empty session aggregate for id.
func NewSession(id uuid.UUID) *Session { return &Session{id: id, version: -1} }

// Version is the stream version of the last applied event, or -1.
func (s *Session) Version() int64 { return s.version }

// AccountID is the account the session belongs to.
func (s *Session) AccountID() uuid.UUID { return s.accountID }

// Apply folds one event into the state.
func (s *Session) Apply(e domain.Event) {
	s.version++
	switch e := e.(type) {
	case *SessionStarted:
		s.started, s.accountID = true, e.AccountID
	case *SessionEnded:
		s.ended = true
	}
}

// Start decides the start of a session.
func (s *Session) Start(accountID uuid.UUID, service, tokenHash string, now time.Time) ([]domain.Event, error) {
	if s.started {
		return nil, domain.Conflict("session_exists", "this session already exists")
	}
	return []domain.Event{&SessionStarted{SessionID: s.id, AccountID: accountID, Service: service, TokenHash: tokenHash,
		StartedAt: now.UTC(), ExpiresAt: now.UTC().Add(SessionTTL)}}, nil
}

// End decides a sign-out. Ending an ended session records nothing.
func (s *Session) End(reason string, now time.Time) ([]domain.Event, error) {
	if !s.started {
		return nil, domain.NotFound("session_not_found", "no such session")
	}
	if s.ended {
		return nil, nil
	}
	return []domain.Event{&SessionEnded{SessionID: s.id, AccountID: s.accountID, EndedAt: now.UTC(), Reason: reason}}, nil
}
