package commands

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/signin"
	"github.com/arr-dev/arr/eventstore"
)

// signinRepo loads and saves magic links and sessions.
type signinRepo struct {
	store Appender
	reg   *domain.Registry
}

func newSigninRepo(store Appender) *signinRepo {
	return &signinRepo{store: store, reg: domain.NewRegistry(signin.Events())}
}

type aggregate interface {
	Apply(domain.Event)
	Version() int64
}

func (r *signinRepo) load(ctx context.Context, stream string, a aggregate) error {
	evs, err := r.store.ReadStream(ctx, stream, eventstore.ReadStreamOptions{Limit: eventstore.DefaultBatch})
	if err != nil {
		return fmt.Errorf("loading %s: %w", stream, err)
	}
	for _, e := range evs {
		de, err := r.reg.Decode(e.Type, e.SchemaVersion, e.Data)
		if err != nil {
			if errors.Is(err, domain.ErrNotFound) {
				a.Apply(nil)
				continue
			}
			return fmt.Errorf("loading %s: %w", stream, err)
		}
		a.Apply(de)
	}
	return nil
}

func (r *signinRepo) save(ctx context.Context, stream string, version int64, md eventstore.Metadata, evs []domain.Event) (uint64, error) {
	if len(evs) == 0 {
		return 0, nil
	}
	ne, err := eventstore.EncodeAll(md, evs...)
	if err != nil {
		return 0, err
	}
	res, err := r.store.Append(ctx, stream, eventstore.AfterVersion(version), ne...)
	if err != nil {
		return 0, fmt.Errorf("saving %s: %w", stream, err)
	}
	return res.LastPosition, nil
}

func linkID(s string) (uuid.UUID, error) {
	id, err := uuid.Parse(s)
	if err != nil {
		return uuid.Nil, &domain.Error{Kind: domain.ErrUnauthenticated, Code: "invalid_link",
			Message: "this sign-in link is invalid, used or expired; ask for a new one"}
	}
	return id, nil
}
