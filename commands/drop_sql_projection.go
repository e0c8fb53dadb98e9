package commands

import (
	"context"
	"errors"

	"github.com/arr-dev/arr/eventstore"
)

// DropSQLProjection records that DroppedBy drops the SQL projection Name.
type DropSQLProjection struct {
	Name      string
	DroppedBy string
	Metadata  eventstore.Metadata
}

// DropSQLProjectionHandler handles DropSQLProjection.
type DropSQLProjectionHandler struct {
	repo  *sqlProjectionRepo
	clock Clock
}

// NewDropSQLProjectionHandler refuses nil dependencies.
func NewDropSQLProjectionHandler(store Appender, clock Clock) (*DropSQLProjectionHandler, error) {
	if store == nil || clock == nil {
		return nil, errors.New("drop SQL projection: nil dependency")
	}
	return &DropSQLProjectionHandler{repo: newSQLProjectionRepo(store), clock: clock}, nil
}

// Handle appends SQLProjectionDropped and returns its position; a name
// not defined is ErrNotFound.
func (h *DropSQLProjectionHandler) Handle(ctx context.Context, c DropSQLProjection) (uint64, error) {
	d, err := h.repo.load(ctx, c.Name)
	if err != nil {
		return 0, err
	}
	e, err := d.Drop(c.DroppedBy, h.clock())
	if err != nil {
		return 0, err
	}
	return h.repo.save(ctx, c.Name, d, e, c.Metadata)
}
