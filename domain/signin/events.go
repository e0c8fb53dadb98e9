package signin

import (
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain"
)

// SignInRequested: someone asked for a magic link to an address. Only the
// SHA-256 of the link's token is recorded.
type SignInRequested struct {
	LinkID      uuid.UUID `json:"link_id"`
	Email       string    `json:"email"`
	Service     string    `json:"service"`
	TokenHash   string    `json:"token_hash"`
	RequestedAt time.Time `json:"requested_at"`
	ExpiresAt   time.Time `json:"expires_at"`
}

func (SignInRequested) EventType() string  { return "SignInRequested" }
func (SignInRequested) SchemaVersion() int { return 1 }

// SignInCompleted: the link was used (once) and started a session.
type SignInCompleted struct {
	LinkID      uuid.UUID `json:"link_id"`
	AccountID   uuid.UUID `json:"account_id"`
	SessionID   uuid.UUID `json:"session_id"`
	CompletedAt time.Time `json:"completed_at"`
}

func (SignInCompleted) EventType() string  { return "SignInCompleted" }
func (SignInCompleted) SchemaVersion() int { return 1 }

// SessionStarted: a browser session began. Only the SHA-256 of its token is
// recorded.
type SessionStarted struct {
	SessionID uuid.UUID `json:"session_id"`
	AccountID uuid.UUID `json:"account_id"`
	Service   string    `json:"service"`
	TokenHash string    `json:"token_hash"`
	StartedAt time.Time `json:"started_at"`
	ExpiresAt time.Time `json:"expires_at"`
}

func (SessionStarted) EventType() string  { return "SessionStarted" }
func (SessionStarted) SchemaVersion() int { return 1 }

// SessionEnded: the session was signed out (it also ends by expiry, which
// needs no event).
type SessionEnded struct {
	SessionID uuid.UUID `json:"session_id"`
	AccountID uuid.UUID `json:"account_id"`
	EndedAt   time.Time `json:"ended_at"`
	Reason    string    `json:"reason"`
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
