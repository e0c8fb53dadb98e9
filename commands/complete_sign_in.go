package commands

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/domain/signin"
	"github.com/arr-dev/arr/eventstore"
)

// CompleteSignIn uses a magic link: it signs the address up (a Free account)
// if it has no account yet, and starts a session. Signing up from the
// gateway also issues the first gateway key.
type CompleteSignIn struct {
	LinkID   string
	Token    string
	Metadata eventstore.Metadata
}

// SignedIn is the result of CompleteSignIn. SessionToken goes into the
// session cookie and exists nowhere else. FirstKey is set on a gateway
// sign-up; its Secret is shown once.
type SignedIn struct {
	AccountID    uuid.UUID
	Email        string
	Service      account.Service
	SignedUp     bool
	SessionID    uuid.UUID
	SessionToken string
	ExpiresAt    time.Time
	FirstKey     *IssuedKey
	Position     uint64
}

// CompleteSignInHandler handles CompleteSignIn. A link works once: the
// SignInCompleted event is appended at the version the link was loaded at,
// so of two concurrent uses only one gets through.
type CompleteSignInHandler struct {
	repo     *signinRepo
	accounts *accountRepo
	issue    *IssueKeyHandler
	clock    Clock
}

// NewCompleteSignInHandler refuses nil dependencies.
func NewCompleteSignInHandler(store Appender, clock Clock) (*CompleteSignInHandler, error) {
	if store == nil || clock == nil {
		return nil, errors.New("complete sign-in: nil dependency")
	}
	issue, err := NewIssueKeyHandler(store, clock)
	if err != nil {
		return nil, err
	}
	return &CompleteSignInHandler{repo: newSigninRepo(store), accounts: &accountRepo{store: store}, issue: issue, clock: clock}, nil
}

// Handle uses the link.
func (h *CompleteSignInHandler) Handle(ctx context.Context, c CompleteSignIn) (SignedIn, error) {
	id, err := linkID(c.LinkID)
	if err != nil {
		return SignedIn{}, err
	}
	l := signin.NewLink(id)
	if err := h.repo.load(ctx, signin.LinkStream(id), l); err != nil {
		return SignedIn{}, err
	}
	now := h.clock()
	accountID := account.IDForEmail(l.Email())
	sessionID := uuid.New()
	evs, err := l.Complete(c.Token, accountID, sessionID, now)
	if err != nil {
		return SignedIn{}, err
	}
	if _, err := h.repo.save(ctx, signin.LinkStream(id), l.Version(), c.Metadata, evs); err != nil {
		if errors.Is(err, domain.ErrConcurrency) {
			_, err = l.Complete("", accountID, sessionID, now) // the same refusal as any used link
		}
		return SignedIn{}, err
	}
	svc := account.Service(l.Service())
	out := SignedIn{AccountID: accountID, Email: l.Email(), Service: svc, SessionID: sessionID}

	pos, err := h.accounts.update(ctx, accountID, c.Metadata, func(a *account.Account) ([]domain.Event, error) {
		if a.Exists() {
			return nil, nil
		}
		return a.Create(l.Email(), account.Free, now)
	})
	if err != nil {
		return SignedIn{}, err
	}
	out.SignedUp, out.Position = pos > 0, pos
	if out.SignedUp && svc == account.Gateway {
		k, err := h.issue.Handle(ctx, IssueKey{AccountID: accountID, Service: account.Gateway, Name: "first key", Metadata: c.Metadata})
		if err != nil {
			return SignedIn{}, err
		}
		out.FirstKey, out.Position = &k, k.Position
	}

	token, hash, err := signin.NewToken()
	if err != nil {
		return SignedIn{}, err
	}
	s := signin.NewSession(sessionID)
	sevs, err := s.Start(accountID, string(svc), hash, now)
	if err != nil {
		return SignedIn{}, err
	}
	spos, err := h.repo.save(ctx, signin.SessionStream(sessionID), s.Version(), c.Metadata, sevs)
	if err != nil {
		return SignedIn{}, err
	}
	out.SessionToken, out.ExpiresAt, out.Position = token, now.UTC().Add(signin.SessionTTL), spos
	return out, nil
}
