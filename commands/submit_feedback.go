package commands

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain/audit"
	"github.com/arr-dev/arr/domain/feedback"
	"github.com/arr-dev/arr/eventstore"
)

// SubmitFeedback rates one of the caller's earlier completions. Entry is
// the completion as the audit read model holds it.
type SubmitFeedback struct {
	AuditHash string
	Entry     audit.Completion
	AccountID uuid.UUID
	KeyID     uuid.UUID
	Rating    float64
	Notes     string
	Metadata  eventstore.Metadata
}

// SubmitFeedbackHandler handles SubmitFeedback.
type SubmitFeedbackHandler struct {
	store Appender
	clock Clock
}

// NewSubmitFeedbackHandler refuses nil dependencies.
func NewSubmitFeedbackHandler(store Appender, clock Clock) (*SubmitFeedbackHandler, error) {
	if store == nil || clock == nil {
		return nil, errors.New("submit feedback: nil dependency")
	}
	return &SubmitFeedbackHandler{store: store, clock: clock}, nil
}

// Handle appends FeedbackSubmitted and returns it with its position.
func (h *SubmitFeedbackHandler) Handle(ctx context.Context, c SubmitFeedback) (*feedback.FeedbackSubmitted, uint64, error) {
	e, err := feedback.Submit(c.AuditHash, c.Entry, c.AccountID, c.KeyID, c.Rating, c.Notes, h.clock())
	if err != nil {
		return nil, 0, err
	}
	ne, err := eventstore.Encode(e, c.Metadata)
	if err != nil {
		return nil, 0, err
	}
	res, err := h.store.Append(ctx, feedback.StreamID(c.AuditHash), eventstore.Any(), ne)
	if err != nil {
		return nil, 0, fmt.Errorf("submitting feedback on %s: %w", c.AuditHash, err)
	}
	return e, res.LastPosition, nil
}
