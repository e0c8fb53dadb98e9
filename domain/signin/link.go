package signin

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain"
)

// LinkTTL is how long a magic link works.
const LinkTTL = 15 * time.Minute

// SessionTTL is how long a session lasts without signing in again.
const SessionTTL = 30 * 24 * time.Hour

// NewToken returns 256 random bits, URL-safe, and their SHA-256 in hex.
func NewToken() (plain, hash string, err error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", "", fmt.Errorf("minting a token: %w", err)
	}
	plain = base64.RawURLEncoding.EncodeToString(b)
	return plain, HashToken(plain), nil
}

// HashToken is the stored form of a link or session token.
func HashToken(plain string) string {
	sum := sha256.Sum256([]byte(plain))
	return hex.EncodeToString(sum[:])
}

// LinkStream is the stream of one magic link.
func LinkStream(id uuid.UUID) string { return "signin-" + id.String() }

// SessionStream is the stream of one session.
func SessionStream(id uuid.UUID) string { return "session-" + id.String() }

// Link is the magic-link aggregate.
type Link struct {
	id        uuid.UUID
	requested bool
	email     string
	service   string
	tokenHash string
	expiresAt time.Time
	used      bool
	version   int64
}

// NewLink returns an empty link aggregate for id.
func NewLink(id uuid.UUID) *Link { return &Link{id: id, version: -1} }

// Version is the stream version of the last applied event, or -1.
func (l *Link) Version() int64 { return l.version }

// Email is the address the link was sent to.
func (l *Link) Email() string { return l.email }

// Service is the service whose page asked for the link.
func (l *Link) Service() string { return l.service }

// Apply folds one event into the state.
func (l *Link) Apply(e domain.Event) {
	l.version++
	switch e := e.(type) {
	case *SignInRequested:
		l.requested, l.email, l.service, l.tokenHash, l.expiresAt = true, e.Email, e.Service, e.TokenHash, e.ExpiresAt
	case *SignInCompleted:
		l.used = true
	}
}

// Request decides the creation of the link.
func (l *Link) Request(email, service, tokenHash string, now time.Time) ([]domain.Event, error) {
	if l.requested {
		return nil, domain.Conflict("link_exists", "this sign-in link already exists")
	}
	return []domain.Event{&SignInRequested{LinkID: l.id, Email: email, Service: service, TokenHash: tokenHash,
		RequestedAt: now.UTC(), ExpiresAt: now.UTC().Add(LinkTTL)}}, nil
}

// Complete decides the use of the link with the presented token. A link
// works once, within LinkTTL, with its own token only; every failure reads
// the same to the caller.
func (l *Link) Complete(token string, accountID, sessionID uuid.UUID, now time.Time) ([]domain.Event, error) {
	bad := &domain.Error{Kind: domain.ErrUnauthenticated, Code: "invalid_link",
		Message: "this sign-in link is invalid, used or expired; ask for a new one"}
	if !l.requested || l.used || !now.Before(l.expiresAt) {
		return nil, bad
	}
	if subtle.ConstantTimeCompare([]byte(HashToken(token)), []byte(l.tokenHash)) != 1 {
		return nil, bad
	}
	return []domain.Event{&SignInCompleted{LinkID: l.id, AccountID: accountID, SessionID: sessionID, CompletedAt: now.UTC()}}, nil
}
