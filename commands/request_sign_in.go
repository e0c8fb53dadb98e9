package commands

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/domain/signin"
	"github.com/arr-dev/arr/eventstore"
)

// RequestSignIn asks for a magic link to an address, from one service's
// account page. It works the same for new and existing addresses.
type RequestSignIn struct {
	Email    string
	Service  account.Service
	Metadata eventstore.Metadata
}

// SignInLink is what the caller mails: LinkID and Token go into the URL.
// Token exists nowhere else; only its hash is recorded.
type SignInLink struct {
	LinkID    uuid.UUID
	Email     string
	Token     string
	ExpiresAt time.Time
	Position  uint64
}

// RequestSignInHandler handles RequestSignIn.
type RequestSignInHandler struct {
	repo  *signinRepo
	clock Clock
}

// NewRequestSignInHandler refuses nil dependencies.
func NewRequestSignInHandler(store Appender, clock Clock) (*RequestSignInHandler, error) {
	if store == nil || clock == nil {
		return nil, errors.New("request sign-in: nil dependency")
	}
	return &RequestSignInHandler{repo: newSigninRepo(store), clock: clock}, nil
}

// Handle records the request and returns the link to send.
func (h *RequestSignInHandler) Handle(ctx context.Context, c RequestSignIn) (SignInLink, error) {
	email, err := account.NormalizeEmail(c.Email)
	if err != nil {
		return SignInLink{}, err
	}
	if _, err := account.ParseService(string(c.Service)); err != nil {
		return SignInLink{}, err
	}
	token, hash, err := signin.NewToken()
	if err != nil {
		return SignInLink{}, err
	}
	id := uuid.New()
	l := signin.NewLink(id)
	now := h.clock()
	evs, err := l.Request(email, string(c.Service), hash, now)
	if err != nil {
		return SignInLink{}, err
	}
	pos, err := h.repo.save(ctx, signin.LinkStream(id), l.Version(), c.Metadata, evs)
	if err != nil {
		return SignInLink{}, err
	}
	return SignInLink{LinkID: id, Email: email, Token: token, ExpiresAt: now.UTC().Add(signin.LinkTTL), Position: pos}, nil
}
