package commands

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/domain/wait"
	"github.com/arr-dev/arr/eventstore"
)

// maxRetries bounds how often a command reloads after losing a race.
const maxRetries = 20

// accountRepo loads and saves Account aggregates.
type accountRepo struct {
	store Appender
}

func (r *accountRepo) load(ctx context.Context, id uuid.UUID) (*account.Account, error) {
	a := account.New(id)
	reg := domain.NewRegistry(account.Events())
	var from uint64
	for {
		evs, err := r.store.ReadStream(ctx, account.StreamID(id), eventstore.ReadStreamOptions{From: from, Limit: eventstore.DefaultBatch})
		if err != nil {
			return nil, fmt.Errorf("loading account %s: %w", id, err)
		}
		for _, e := range evs {
			de, err := reg.Decode(e.Type, e.SchemaVersion, e.Data)
			if err != nil {
				if errors.Is(err, domain.ErrNotFound) {
					a.Apply(nil) // an event type this build does not know: count it, skip it
					continue
				}
				return nil, fmt.Errorf("loading account %s: %w", id, err)
			}
			a.Apply(de)
		}
		if len(evs) < eventstore.DefaultBatch {
			return a, nil
		}
		from = evs[len(evs)-1].StreamVersion + 1
	}
}

// update loads the account, lets decide produce events, and appends them at
// the loaded version, retrying from a fresh load when another writer got
// there first. It returns the position of the last event appended (0 when
// decide produced none).
func (r *accountRepo) update(ctx context.Context, id uuid.UUID, md eventstore.Metadata, decide func(*account.Account) ([]domain.Event, error)) (uint64, error) {
	for attempt := 0; ; attempt++ {
		a, err := r.load(ctx, id)
		if err != nil {
			return 0, err
		}
		evs, err := decide(a)
		if err != nil {
			return 0, err
		}
		if len(evs) == 0 {
			return 0, nil
		}
		ne, err := eventstore.EncodeAll(md, evs...)
		if err != nil {
			return 0, err
		}
		res, err := r.store.Append(ctx, account.StreamID(id), eventstore.AfterVersion(a.Version()), ne...)
		if err == nil {
			return res.LastPosition, nil
		}
		if !errors.Is(err, domain.ErrConcurrency) || attempt >= maxRetries {
			return 0, fmt.Errorf("saving account %s: %w", id, err)
		}
		// Lost a race: back off a little (with jitter) and decide again.
		d := time.Duration(1+rand.IntN(5*(attempt+1))) * time.Millisecond
		if !wait.Sleep(ctx, d) {
			return 0, ctx.Err()
		}
	}
}
