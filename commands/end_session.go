package commands

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain/signin"
	"github.com/arr-dev/arr/eventstore"
)

// EndSession signs a session out.
type EndSession struct {
	SessionID uuid.UUID
	Metadata  eventstore.Metadata
}

// EndSessionHandler handles EndSession; ending an ended session appends
// nothing (Position 0).
type EndSessionHandler struct {
	repo  *signinRepo
	clock Clock
}

// NewEndSessionHandler refuses nil dependencies.
func NewEndSessionHandler(store Appender, clock Clock) (*EndSessionHandler, error) {
	if store == nil || clock == nil {
		return nil, errors.New("end session: nil dependency")
	}
	return &EndSessionHandler{repo: newSigninRepo(store), clock: clock}, nil
}

// Handle ends the session and returns the position of SessionEnded.
func (h *EndSessionHandler) Handle(ctx context.Context, c EndSession) (uint64, error) {
	s := signin.NewSession(c.SessionID)
	if err := h.repo.load(ctx, signin.SessionStream(c.SessionID), s); err != nil {
		return 0, err
	}
	evs, err := s.End("signed_out", h.clock())
	if err != nil {
		return 0, err
	}
	return h.repo.save(ctx, signin.SessionStream(c.SessionID), s.Version(), c.Metadata, evs)
}
