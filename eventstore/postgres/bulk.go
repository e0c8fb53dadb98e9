package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/eventstore"
)

// AppendBulk writes all appends in one transaction with COPY, all or
// nothing. It bypasses the group-commit queue (the head lock still orders
// it against every other writer). Retrying a bulk append whose events are
// all already in the log returns the first results with Duplicate set.
func (s *Store) AppendBulk(ctx context.Context, appends []eventstore.Append) ([]eventstore.AppendResult, error) {
	if len(appends) == 0 {
		return nil, nil
	}
	for _, a := range appends {
		if err := a.Validate(false); err != nil {
			return nil, err
		}
	}
	results, _, err := s.commit(ctx, appends, true)
	if err == nil {
		return results, nil
	}
	var wrong *eventstore.WrongExpectedVersionError
	if !errors.Is(err, errDuplicateInsert) && !errors.As(err, &wrong) {
		return nil, err
	}
	// A retry of a committed bulk fails its expectations or its unique
	// index; tell an exact retry apart from a real conflict.
	results, retryErr := s.bulkRetryResults(ctx, appends)
	if retryErr != nil && wrong != nil {
		return nil, err
	}
	return results, retryErr
}

var errNotRetry = errors.New("not a retry")

// bulkRetryResults answers a bulk append that hit existing event ids: if it
// is an exact retry, the first results; otherwise ErrDuplicateEventID.
func (s *Store) bulkRetryResults(ctx context.Context, appends []eventstore.Append) ([]eventstore.AppendResult, error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("bulk append: %w", err)
	}
	defer tx.Rollback(context.Background()) //nolint:errcheck
	var ids []uuid.UUID
	for _, a := range appends {
		for _, e := range a.Events {
			ids = append(ids, e.ID)
		}
	}
	existing, err := lookupIDs(ctx, tx, ids)
	if err != nil {
		return nil, err
	}
	out := make([]eventstore.AppendResult, len(appends))
	for i, a := range appends {
		r, ok, err := duplicateOf(a, existing, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("bulk append to %s: %w", a.StreamID, err)
		}
		if !ok {
			if len(existing) == 0 {
				return nil, errNotRetry
			}
			return nil, fmt.Errorf("bulk append to %s: %w", a.StreamID, eventstore.ErrDuplicateEventID)
		}
		out[i] = r
	}
	return out, nil
}
