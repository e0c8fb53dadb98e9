package commands

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/answer"
	"github.com/arr-dev/arr/domain/usage"
	"github.com/arr-dev/arr/eventstore"
)

// RecordAnswersServed records answers served to keys, one AnswerServed per
// call. Each carries its own event id, so sending the same command again
// after an error of unknown outcome appends nothing twice.
type RecordAnswersServed struct {
	Served   []ServedAnswer
	Metadata eventstore.Metadata
}

// ServedAnswer is one served answer and the id of its event.
type ServedAnswer struct {
	EventID uuid.UUID
	Event   answer.AnswerServed
}

// RecordAnswersServedHandler handles RecordAnswersServed.
type RecordAnswersServedHandler struct{ store Appender }

// NewRecordAnswersServedHandler refuses a nil store.
func NewRecordAnswersServedHandler(store Appender) (*RecordAnswersServedHandler, error) {
	if store == nil {
		return nil, errors.New("record answers served: nil store")
	}
	return &RecordAnswersServedHandler{store: store}, nil
}

// Handle appends the events, one append per account and UTC day, and
// returns the last position.
func (h *RecordAnswersServedHandler) Handle(ctx context.Context, c RecordAnswersServed) (uint64, error) {
	streams := map[string][]eventstore.NewEvent{}
	var order []string
	for _, s := range c.Served {
		if s.EventID == uuid.Nil || s.Event.KeyID == uuid.Nil || s.Event.AccountID == uuid.Nil {
			return 0, domain.Invalid("served_without_id", "event_id", "a served answer needs an event id, an account and a key")
		}
		ne, err := eventstore.Encode(&s.Event, c.Metadata)
		if err != nil {
			return 0, err
		}
		ne.ID = s.EventID
		id := answer.ServedStreamID(s.Event.AccountID, usage.Day(s.Event.ServedAt))
		if _, ok := streams[id]; !ok {
			order = append(order, id)
		}
		streams[id] = append(streams[id], ne)
	}
	var last uint64
	for _, id := range order {
		res, err := h.store.Append(ctx, id, eventstore.Any(), streams[id]...)
		if err != nil {
			return 0, fmt.Errorf("recording served answers in %s: %w", id, err)
		}
		last = res.LastPosition
	}
	return last, nil
}
