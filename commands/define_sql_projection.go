package commands

import (
	"context"
	"errors"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/eventstore"
)

// DefineSQLProjection records an analyst's SQL projection: File (its name,
// for messages) holds SQL, and DefinedBy is who defines it.
type DefineSQLProjection struct {
	File      string
	SQL       string
	DefinedBy string
	Metadata  eventstore.Metadata
}

// DefineSQLProjectionHandler handles DefineSQLProjection.
type DefineSQLProjectionHandler struct {
	repo    *sqlProjectionRepo
	checker SQLProjectionChecker
	// builtIn reports whether a name is a built-in projection's.
	builtIn func(string) bool
	clock   Clock
}

// NewDefineSQLProjectionHandler refuses nil dependencies.
func NewDefineSQLProjectionHandler(store Appender, checker SQLProjectionChecker, builtIn func(string) bool, clock Clock) (*DefineSQLProjectionHandler, error) {
	if store == nil || checker == nil || builtIn == nil || clock == nil {
		return nil, errors.New("define SQL projection: nil dependency")
	}
	return &DefineSQLProjectionHandler{repo: newSQLProjectionRepo(store), checker: checker, builtIn: builtIn, clock: clock}, nil
}

// Handle checks the definition (its syntax, then against the database, in
// a transaction it rolls back) and appends SQLProjectionDefined; it
// returns the projection's name and the event's position. A definition
// that fails any check appends nothing.
func (h *DefineSQLProjectionHandler) Handle(ctx context.Context, c DefineSQLProjection) (string, uint64, error) {
	name, err := h.checker.DefinitionName(c.File, c.SQL)
	if err != nil {
		return "", 0, err
	}
	if h.builtIn(name) {
		return "", 0, domain.Conflict("projection_exists", "%s is a built-in projection; give yours another name", name)
	}
	d, err := h.repo.load(ctx, name)
	if err != nil {
		return "", 0, err
	}
	e, err := d.Define(c.SQL, c.DefinedBy, h.clock())
	if err != nil {
		return "", 0, err
	}
	if err := h.checker.CheckDefinition(ctx, c.File, c.SQL); err != nil {
		return "", 0, err
	}
	pos, err := h.repo.save(ctx, name, d, e, c.Metadata)
	return name, pos, err
}
