package commands

import (
	"context"
	"errors"
	"fmt"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/analysis"
	"github.com/arr-dev/arr/eventstore"
)

// SQLProjectionChecker reads and tries an analyst's definition file; the
// read side implements it (projections/sqlproj.Engine), cmd/arr wires it.
type SQLProjectionChecker interface {
	// DefinitionName parses the file and returns the projection's name.
	DefinitionName(file, sql string) (string, error)
	// CheckDefinition tries the definition against the database,
	// changing nothing.
	CheckDefinition(ctx context.Context, file, sql string) error
}

// sqlProjectionRepo loads and saves the Definition aggregate of one name.
type sqlProjectionRepo struct {
	store Appender
	reg   *domain.Registry
}

func newSQLProjectionRepo(store Appender) *sqlProjectionRepo {
	return &sqlProjectionRepo{store: store, reg: domain.NewRegistry(analysis.Events())}
}

func (r *sqlProjectionRepo) load(ctx context.Context, name string) (*analysis.Definition, error) {
	d := analysis.New(name)
	var from uint64
	for {
		evs, err := r.store.ReadStream(ctx, analysis.StreamID(name), eventstore.ReadStreamOptions{From: from, Limit: eventstore.DefaultBatch})
		if err != nil {
			return nil, fmt.Errorf("loading SQL projection %s: %w", name, err)
		}
		for _, e := range evs {
			de, err := r.reg.Decode(e.Type, e.SchemaVersion, e.Data)
			if errors.Is(err, domain.ErrNotFound) {
				d.Apply(nil)
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("loading SQL projection %s: %w", name, err)
			}
			d.Apply(de)
		}
		if len(evs) < eventstore.DefaultBatch {
			return d, nil
		}
		from = evs[len(evs)-1].StreamVersion + 1
	}
}

// save appends e at the version d was loaded at; a writer that got there
// first makes it fail with ErrConcurrency (the caller reports it: the
// state it decided on is gone).
func (r *sqlProjectionRepo) save(ctx context.Context, name string, d *analysis.Definition, e domain.Event, md eventstore.Metadata) (uint64, error) {
	ne, err := eventstore.Encode(e, md)
	if err != nil {
		return 0, err
	}
	res, err := r.store.Append(ctx, analysis.StreamID(name), eventstore.AfterVersion(d.Version()), ne)
	if err != nil {
		return 0, fmt.Errorf("saving SQL projection %s: %w", name, err)
	}
	return res.LastPosition, nil
}
