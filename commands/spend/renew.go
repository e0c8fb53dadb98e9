package spend

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/commands/complete"
)

// Keeping the reservations of live requests. A reservation is leased
// (Config.Lease) so that a process that dies mid-request does not hold
// it for ever; a request that is still running must not lose it, or the
// sweep would release its room to other requests and the request would
// then settle on top of them. So every admitted request is held until it
// settles, and Run renews the leases of held requests once a quarter of
// their lease has passed, in one statement per process (the new expiry
// is the database's now() plus the lease). A request whose lease cannot
// be renewed (the database does not answer; or its reservation is gone,
// released once its budget periods ended) is cut (complete.CutOf, cause
// complete.ErrReservationLost, wrapped with which) once less than a
// quarter of its lease is left, and settles what it relayed. The sweep
// never releases a reservation whose budget period runs (spent.go).

// hold is an admitted request that has not settled.
type hold struct {
	expires time.Time
	cut     func(error) // nil: the request cannot be cut
}

func (g *Guard) hold(id uuid.UUID, expires time.Time, cut func(error)) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.live[id] = &hold{expires: expires, cut: cut}
}

func (g *Guard) drop(id uuid.UUID) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.live, id)
}

// Held is how many admitted requests have not settled yet.
func (g *Guard) Held() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.live)
}

// renewEvery is how often Run looks for leases to renew: a lease is
// renewed on the first look after a quarter of it has passed.
const renewEvery = time.Second

// Run renews the leases of the requests in flight until ctx ends.
func (g *Guard) Run(ctx context.Context) error {
	t := time.NewTicker(renewEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			if err := g.renew(ctx); err != nil {
				g.cfg.Logger.Warn("renewing the leases of requests in flight failed; requests whose lease would run out are cut", "err", err)
			}
		}
	}
}

// renew renews the leases that are a quarter through, and cuts the
// requests whose lease could not be renewed and is nearly out (or is
// gone).
func (g *Guard) renew(ctx context.Context) error {
	now := g.cfg.Clock()
	var due []uuid.UUID
	g.mu.Lock()
	for id, h := range g.live {
		if h.expires.Sub(now) <= g.cfg.Lease*3/4 {
			due = append(due, id)
		}
	}
	g.mu.Unlock()
	if len(due) == 0 {
		return nil
	}
	expires := now.Add(g.cfg.Lease)
	rctx, cancel := context.WithTimeout(ctx, g.cfg.SettleTimeout)
	defer cancel()
	rows, err := g.cfg.Pool.Query(rctx, `UPDATE spend_reservations SET expires_at = GREATEST(expires_at, statement_timestamp() + $2 * interval '1 microsecond') WHERE id = ANY($1) RETURNING id`, due, g.cfg.Lease.Microseconds())
	renewed := map[uuid.UUID]bool{}
	if err == nil {
		for rows.Next() {
			var id uuid.UUID
			if err = rows.Scan(&id); err != nil {
				break
			}
			renewed[id] = true
		}
		rows.Close()
		if err == nil {
			err = rows.Err()
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, id := range due {
		h, ok := g.live[id]
		switch {
		case !ok: // settled meanwhile
		case renewed[id]:
			h.expires = expires
		case err == nil || h.expires.Sub(now) <= g.cfg.Lease/4:
			// Gone (its budget periods ended and the sweep released
			// it), or not renewed and nearly out: the request must not
			// spend past its reservation.
			if h.cut != nil {
				cause := fmt.Errorf("%w: its lease could not be renewed in time (the database did not answer)", complete.ErrReservationLost)
				if err == nil {
					cause = fmt.Errorf("%w: it was released once its budget periods ended", complete.ErrReservationLost)
				}
				h.cut(cause)
			}
			delete(g.live, id)
		}
	}
	if err != nil {
		return fmt.Errorf("renewing %d leases: %w", len(due), err)
	}
	return nil
}
