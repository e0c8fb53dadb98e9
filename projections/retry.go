package projections

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/arr-dev/arr/domain/text"
)

// retryBatch is how many parked events a retry applies per transaction:
// memory and the time the checkpoint is held stay bounded however many
// are parked.
const retryBatch = 500

// maxFailing bounds RetryResult.Failing.
const maxFailing = 100

// RetryResult says what a retry of parked events did.
type RetryResult struct {
	// Applied counts the events applied (and no longer parked).
	Applied int64 `json:"applied"`
	// StillParked counts the projection's parked events after the retry:
	// those that failed again, and any parked meanwhile.
	StillParked int64 `json:"still_parked"`
	// Failing is the first maxFailing of the events that failed again,
	// with their new errors (arr projections parked lists them all).
	Failing []ParkedEvent `json:"failing"`
}

// RetryParked applies projection name's parked events again: every event
// parked when it starts, oldest first, in transactions of retryBatch
// events, each event under a savepoint. One that applies leaves the
// parked list, one that fails again stays with its new error. Each
// transaction holds the projection's checkpoint, so no runner applies a
// batch at the same time. progress, if set, is told how many of the
// events it has tried. A batch that fails as a whole (the database went
// away) ends it with an error; the batches before it stay applied, and
// running it again picks up the rest.
func (r *Runner) RetryParked(ctx context.Context, name string, progress Progress) (RetryResult, error) {
	p, err := r.get(name)
	if err != nil {
		return RetryResult{}, err
	}
	var upTo, total int64
	if err := r.pool.QueryRow(ctx, `SELECT coalesce(max(position), 0), count(*) FROM public.projection_parked WHERE projection = $1 AND cleared_at IS NULL`, name).Scan(&upTo, &total); err != nil {
		return RetryResult{}, fmt.Errorf("retrying parked events of %s: %w", name, err)
	}
	var res RetryResult
	var tried uint64
	for after := int64(0); after < upTo; {
		batch, err := r.parkedBatch(ctx, name, after, upTo)
		if err != nil {
			return res, fmt.Errorf("retrying parked events of %s (%d applied so far): %w", name, res.Applied, err)
		}
		if len(batch) == 0 {
			break
		}
		var applied int64
		var failing []ParkedEvent
		err = r.inTx(ctx, p, func(tx pgx.Tx) error {
			applied, failing = 0, nil
			// Held as a rebuild's swap holds it: a retry frozen here
			// (a CLI stopped) does not pause the live runners for long.
			if err := r.holdCheckpoint(ctx, tx, name, p.SessionRole == ""); err != nil {
				return err
			}
			if err := setSearchPath(ctx, tx, Schema(name)); err != nil {
				return err
			}
			for _, pe := range batch {
				ok, err := r.retryOne(ctx, tx, p, &pe)
				if err != nil {
					return err
				}
				if ok {
					applied++
				} else {
					failing = append(failing, pe)
				}
			}
			return nil
		})
		if err != nil {
			return res, fmt.Errorf("retrying parked events of %s (%d applied so far): %w", name, res.Applied, err)
		}
		res.Applied += applied
		res.Failing = append(res.Failing, failing[:min(len(failing), maxFailing-len(res.Failing))]...)
		after = int64(batch[len(batch)-1].Position)
		tried += uint64(len(batch))
		if progress != nil {
			progress(tried, max(tried, uint64(total)))
		}
	}
	if err := purgeCleared(ctx, r.pool, name); err != nil {
		return res, err
	}
	if res.StillParked, err = CountParked(ctx, r.pool, name); err != nil {
		return res, err
	}
	return res, nil
}

// parkedBatch reads the next retryBatch events name parked in (after, upTo].
func (r *Runner) parkedBatch(ctx context.Context, name string, after, upTo int64) ([]ParkedEvent, error) {
	rows, err := r.pool.Query(ctx, `SELECT projection, position, event_id::text, event_type, error, attempts, parked_at, retried_at
		FROM public.projection_parked WHERE projection = $1 AND position > $2 AND position <= $3 AND cleared_at IS NULL ORDER BY position LIMIT $4`,
		name, after, upTo, retryBatch)
	if err != nil {
		return nil, fmt.Errorf("reading parked events: %w", err)
	}
	out, err := pgx.CollectRows(rows, scanParked)
	if err != nil {
		return nil, fmt.Errorf("reading parked events: %w", err)
	}
	return out, nil
}

// retryOne applies the parked event pe again in tx. It reports whether it
// applied (and unparks it); if it failed again, pe holds its new error
// and attempts.
func (r *Runner) retryOne(ctx context.Context, tx pgx.Tx, p *compiled, pe *ParkedEvent) (bool, error) {
	evs, err := r.store.ReadAll(ctx, pe.Position-1, 1)
	if err != nil {
		return false, fmt.Errorf("reading parked event %d: %w", pe.Position, err)
	}
	if len(evs) != 1 || evs[0].Position != pe.Position {
		return false, fmt.Errorf("parked event %d is not in the log", pe.Position)
	}
	again, err := applyIsolated(ctx, tx, r.reg, p, evs)
	if err != nil {
		return false, fmt.Errorf("applying parked event %d: %w", pe.Position, err)
	}
	if len(again) > 0 {
		pe.Error, pe.Attempts = truncate(text.Clean(again[0].Error), 2000), pe.Attempts+1
		if _, err := tx.Exec(ctx, `UPDATE public.projection_parked SET error = $3, attempts = attempts + 1, retried_at = now()
			WHERE projection = $1 AND position = $2 AND cleared_at IS NULL`, pe.Projection, int64(pe.Position), pe.Error); err != nil {
			return false, fmt.Errorf("updating parked event %d: %w", pe.Position, err)
		}
		return false, nil
	}
	if _, err := tx.Exec(ctx, `UPDATE public.projection_parked SET cleared_at = now(), retried_at = now() WHERE projection = $1 AND position = $2 AND cleared_at IS NULL`, pe.Projection, int64(pe.Position)); err != nil {
		return false, fmt.Errorf("unparking event %d: %w", pe.Position, err)
	}
	return true, nil
}
