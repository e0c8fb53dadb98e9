package signin

import (
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain"
)

// SignInRequested: someone asked for a magic link to an address. Only the
// SHA-256 of the link's token is recorded.
type SignInRequested struct {
	// LinkID identifies the magic link.
	LinkID uuid.UUID `json:"link_id"`
	// Email is the address the link was sent to.
	Email string `json:"email"`
	// Service is the service whose page asked for the link.
	Service string `json:"service"`
	// TokenHash is the hex SHA-256 of the link's token; the token itself
	// is only in the mail.
	TokenHash string `json:"token_hash"`
	// RequestedAt is when the link was asked for (UTC).
	RequestedAt time.Time `json:"requested_at"`
	// ExpiresAt is when the link stops working if unused (UTC).
	ExpiresAt time.Time `json:"expires_at"`
}

func (SignInRequested) EventType() string  { return "SignInRequested" }
func (SignInRequested) SchemaVersion() int { return 1 }

// SignInCompleted: the link was used (once) and started a session.
type SignInCompleted struct {
	// LinkID is the link that was used (as in its SignInRequested).
	LinkID uuid.UUID `json:"link_id"`
	// AccountID is the account signed in to.
	AccountID uuid.UUID `json:"account_id"`
	// SessionID is the session the sign-in started.
	SessionID uuid.UUID `json:"session_id"`
	// CompletedAt is when the link was used (UTC).
	CompletedAt time.Time `json:"completed_at"`
}

func (SignInCompleted) EventType() string  { return "SignInCompleted" }
func (SignInCompleted) SchemaVersion() int { return 1 }

// SessionStarted: a browser session began. Only the SHA-256 of its token is
// recorded.
type SessionStarted struct {
	// SessionID identifies the session.
	SessionID uuid.UUID `json:"session_id"`
	// AccountID is the signed-in account.
	AccountID uuid.UUID `json:"account_id"`
	// Service is the service whose pages the session is for.
	Service string `json:"service"`
	// TokenHash is the hex SHA-256 of the session cookie's token.
	TokenHash string `json:"token_hash"`
	// StartedAt is when the session began (UTC).
	StartedAt time.Time `json:"started_at"`
	// ExpiresAt is when the session ends unless signed out before (UTC).
	ExpiresAt time.Time `json:"expires_at"`
}

func (SessionStarted) EventType() string  { return "SessionStarted" }
func (SessionStarted) SchemaVersion() int { return 1 }

// SessionEnded: the session was signed out (it also ends by expiry, which
// needs no event).
type SessionEnded struct {
	// SessionID is the session that ended.
	SessionID uuid.UUID `json:"session_id"`
	// AccountID is the session's account.
	AccountID uuid.UUID `json:"account_id"`
	// EndedAt is when it ended (UTC).
	EndedAt time.Time `json:"ended_at"`
	// Reason says why, e.g. "signed_out".
	Reason string `json:"reason"`
}

func (SessionEnded) EventType() string  { return "SessionEnded" }
func (SessionEnded) SchemaVersion() int { return 1 }

// Events lists constructors for every event of this package.
func Events() []func() domain.Event {
	return []func() domain.Event{
		func() domain.Event { return &SignInRequested{} },
		func() domain.Event { return &SignInCompleted{} },
		func() domain.Event { return &SessionStarted{} },
		func() domain.Event { return &SessionEnded{} },
	}
}
