package spend

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/domain/account"
)

// kind is what a counter counts.
type kind int

const (
	kindBudget        kind = iota // a key's budget: micro-dollars
	kindAccountBudget             // an account's budget: micro-dollars
	kindRequests                  // a key's requests per minute
	kindTokens                    // a key's tokens per minute
)

// ask is one counter a request reserves in: n of limit in the window
// [start, end); actual is what it used, once settled.
type ask struct {
	kind   kind
	bucket string
	start  time.Time
	end    time.Time
	n      int64
	limit  int64
	period account.Period
	actual int64
}

// count is a counter as a reservation found it (before its own
// reservation): what ended requests used and what requests in flight
// reserved.
type count struct {
	used, reserved int64
}

// fits reports whether a reserves within its limit given c.
func (a ask) fits(c count) bool { return c.used+c.reserved+a.n <= a.limit }

// reserve reserves every ask or none, in one round trip and one
// transaction: it creates the missing counters, locks them all in
// (bucket, window_start) order, so concurrent reservations of other
// processes queue instead of deadlocking, reads them, and raises each
// one's reservation only if every ask fits, recording the reservation
// as id, leased until expires (a process that dies before it settles
// leaves it to the sweep: Ledger.Sweep). It returns the counts found, in
// asks' order, and whether it reserved.
func reserve(ctx context.Context, pool *pgxpool.Pool, id uuid.UUID, lease time.Duration, asks []ask, quota PlanQuota) ([]count, bool, error) {
	order := sorted(asks)
	buckets, starts, ends, ns, limits := columns(asks, order)
	got := make([]count, len(asks))
	var reserved int64
	b := &pgx.Batch{}
	b.Queue(`BEGIN`)
	b.Queue(`SET LOCAL synchronous_commit = off`)
	if quota != nil {
		quota.Queue(b) // a full window aborts the transaction
	}
	b.Queue(`INSERT INTO spend_counters (bucket, window_start, window_end)
SELECT b, s, e FROM unnest($1::text[], $2::timestamptz[], $3::timestamptz[]) WITH ORDINALITY AS v(b, s, e, i) ORDER BY i
ON CONFLICT (bucket, window_start) DO NOTHING`, buckets, starts, ends)
	b.Queue(`SELECT c.used, c.reserved FROM unnest($1::text[], $2::timestamptz[]) WITH ORDINALITY AS v(b, s, i)
JOIN spend_counters c ON c.bucket = v.b AND c.window_start = v.s ORDER BY v.i FOR UPDATE OF c`, buckets, starts).Query(func(rows pgx.Rows) error {
		i := 0
		var c count
		_, err := pgx.ForEachRow(rows, []any{&c.used, &c.reserved}, func() error {
			if i < len(order) {
				got[order[i]] = c
			}
			i++
			return nil
		})
		if err == nil && i != len(order) {
			err = fmt.Errorf("%d of %d counters found", i, len(order))
		}
		return err
	})
	b.Queue(`WITH up AS (UPDATE spend_counters c SET reserved = c.reserved + v.n
	FROM unnest($1::text[], $2::timestamptz[], $3::bigint[], $4::bigint[]) AS v(b, s, n, lim)
	WHERE c.bucket = v.b AND c.window_start = v.s AND NOT EXISTS (
		SELECT 1 FROM unnest($1::text[], $2::timestamptz[], $3::bigint[], $4::bigint[]) AS w(b, s, n, lim)
		JOIN spend_counters d ON d.bucket = w.b AND d.window_start = w.s
		WHERE d.used + d.reserved + w.n > w.lim)
	RETURNING 1),
lease AS (INSERT INTO spend_reservations (id, buckets, starts, amounts, expires_at)
	SELECT $5, $1, $2, $3, statement_timestamp() + $6 * interval '1 microsecond' WHERE (SELECT count(*) FROM up) = cardinality($1::text[]) RETURNING 1)
SELECT count(*) FROM up`, buckets, starts, ns, limits, id, lease.Microseconds()).QueryRow(func(row pgx.Row) error {
		return row.Scan(&reserved)
	})
	b.Queue(`COMMIT`)
	if err := pool.SendBatch(ctx, b).Close(); err != nil {
		return nil, false, err
	}
	ok := reserved == int64(len(asks))
	if ok != allFit(asks, got) {
		return nil, false, fmt.Errorf("the reservation (%d of %d counters) and the counts read disagree", reserved, len(asks))
	}
	return got, ok, nil
}

func allFit(asks []ask, got []count) bool {
	for i, a := range asks {
		if !a.fits(got[i]) {
			return false
		}
	}
	return true
}

// settle turns each ask's reservation into its actual use, in one round
// trip and one transaction that locks the counters in (bucket,
// window_start) order first, and returns each counter's use after it, in
// asks' order. A reservation the sweep already released (its process
// was thought dead) is not released twice.
func settle(ctx context.Context, pool *pgxpool.Pool, id uuid.UUID, asks []ask) ([]int64, error) {
	order := sorted(asks)
	buckets, starts, _, ns, _ := columns(asks, order)
	actual := make([]int64, len(order))
	for j, i := range order {
		actual[j] = asks[i].actual
	}
	after := make([]int64, len(asks))
	b := &pgx.Batch{}
	b.Queue(`BEGIN`)
	b.Queue(`SET LOCAL synchronous_commit = off`)
	// The reservation's row first, then the counters: the sweep's order.
	b.Queue(`SELECT 1 FROM spend_reservations WHERE id = $1 FOR UPDATE`, id)
	b.Queue(`SELECT 1 FROM unnest($1::text[], $2::timestamptz[]) WITH ORDINALITY AS v(b, s, i)
JOIN spend_counters c ON c.bucket = v.b AND c.window_start = v.s ORDER BY v.i FOR UPDATE OF c`, buckets, starts)
	b.Queue(`WITH gone AS (DELETE FROM spend_reservations WHERE id = $5 RETURNING id)
UPDATE spend_counters c SET reserved = GREATEST(c.reserved - CASE WHEN EXISTS (SELECT 1 FROM gone) THEN v.n ELSE 0 END, 0), used = c.used + v.a
FROM unnest($1::text[], $2::timestamptz[], $3::bigint[], $4::bigint[]) WITH ORDINALITY AS v(b, s, n, a, i)
WHERE c.bucket = v.b AND c.window_start = v.s
RETURNING v.i, c.used`, buckets, starts, ns, actual, id).Query(func(rows pgx.Rows) error {
		var i, used int64
		_, err := pgx.ForEachRow(rows, []any{&i, &used}, func() error {
			if i >= 1 && int(i) <= len(order) {
				after[order[i-1]] = used
			}
			return nil
		})
		return err
	})
	b.Queue(`COMMIT`)
	return after, pool.SendBatch(ctx, b).Close()
}

// sorted is the indexes of asks in (bucket, start) order: the order in
// which every transaction locks counters.
func sorted(asks []ask) []int {
	order := make([]int, len(asks))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(x, y int) int {
		if c := strings.Compare(asks[x].bucket, asks[y].bucket); c != 0 {
			return c
		}
		return asks[x].start.Compare(asks[y].start)
	})
	return order
}

// columns are the asks' fields as arrays, in order.
func columns(asks []ask, order []int) (buckets []string, starts, ends []time.Time, ns, limits []int64) {
	for _, i := range order {
		a := asks[i]
		buckets, starts, ends = append(buckets, a.bucket), append(starts, a.start), append(ends, a.end)
		ns, limits = append(ns, a.n), append(limits, a.limit)
	}
	return
}
