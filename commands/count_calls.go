package commands

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/domain/usage"
	"github.com/arr-dev/arr/eventstore"
)

// CountCalls records how many admitted requests keys of one account made on
// one UTC day. Counts are facts with nothing to decide against, so they are
// appended whatever the stream holds; each carries its own event id, so
// sending the same command again (after an error whose outcome is unknown)
// appends nothing twice.
type CountCalls struct {
	AccountID uuid.UUID
	Day       string // usage.DayLayout
	Keys      []KeyCalls
	Metadata  eventstore.Metadata
}

// KeyCalls is one key's count within CountCalls.
type KeyCalls struct {
	EventID uuid.UUID
	KeyID   uuid.UUID
	Service account.Service
	Calls   int64
}

// CountCallsHandler handles CountCalls.
type CountCallsHandler struct {
	store Appender
	clock Clock
}

// NewCountCallsHandler refuses nil dependencies.
func NewCountCallsHandler(store Appender, clock Clock) (*CountCallsHandler, error) {
	if store == nil || clock == nil {
		return nil, errors.New("count calls: nil dependency")
	}
	return &CountCallsHandler{store: store, clock: clock}, nil
}

// Handle appends one CallsCounted per key and returns the position of the
// last one.
func (h *CountCallsHandler) Handle(ctx context.Context, c CountCalls) (uint64, error) {
	if len(c.Keys) == 0 {
		return 0, nil
	}
	now := h.clock().UTC()
	evs := make([]eventstore.NewEvent, 0, len(c.Keys))
	for _, k := range c.Keys {
		if k.EventID == uuid.Nil {
			return 0, domain.Invalid("event_id_required", "event_id", "a usage count needs an event id for idempotent retries")
		}
		e, err := usage.Count(c.AccountID, k.KeyID, k.Service, c.Day, k.Calls, now)
		if err != nil {
			return 0, err
		}
		ne, err := eventstore.Encode(e, c.Metadata)
		if err != nil {
			return 0, err
		}
		ne.ID = k.EventID
		evs = append(evs, ne)
	}
	res, err := h.store.Append(ctx, usage.StreamID(c.AccountID, c.Day), eventstore.Any(), evs...)
	if err != nil {
		return 0, fmt.Errorf("counting calls of account %s on %s: %w", c.AccountID, c.Day, err)
	}
	return res.LastPosition, nil
}
