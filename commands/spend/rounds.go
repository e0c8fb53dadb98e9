package spend

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// reserveRound reserves for the jobs of one group (the same counters and
// limits), in one transaction: alone, as reserve; together, each request
// decided on its own, in arrival order, on the counters as the requests
// before it in the round left them. A request that does not fit is
// refused for the limit it does not fit and leaves no trace: the requests
// after it are decided as if it had not been sent (a request too large
// for a budget never refuses a small one that fits).
//
// A request whose plan count was left to its reservation (reserveJob.quota)
// has it counted in the same transaction when it has the round to itself
// (one round trip for the key, its limits and its quota); in a round of
// several, each such count takes a round trip of its own first (a
// request the quota refuses leaves the round).
func reserveRound(ctx context.Context, pool *pgxpool.Pool, jobs []reserveJob) {
	if len(jobs) == 1 {
		j := jobs[0]
		got, ok, err := reserve(ctx, pool, j.id, j.lease, j.asks, j.quota)
		if j.quota != nil {
			if refused := j.quota.Counted(err); refused != nil && refused != err {
				j.reply <- reserveReply{refused: refused}
				return
			}
		}
		j.reply <- reserveReply{got: got, ok: ok, err: err}
		return
	}
	kept := jobs[:0:0]
	for _, j := range jobs {
		if j.quota != nil {
			if err := j.quota.Count(ctx); err != nil {
				j.reply <- reserveReply{refused: err}
				continue
			}
		}
		kept = append(kept, j)
	}
	if jobs = kept; len(jobs) == 0 {
		return
	}
	decided, err := reserveMany(ctx, pool, jobs)
	for r, j := range jobs {
		if err != nil {
			j.reply <- reserveReply{err: err}
			continue
		}
		j.reply <- reserveReply{got: decided[r].got, ok: decided[r].ok}
	}
}

// decision is one request of a round as reserveMany decided it: the
// counters it found (what ended requests used, what requests in flight
// reserved, the requests of the round admitted before it included) and
// whether it was admitted.
type decision struct {
	got []count
	ok  bool
}

// decide admits each job, in order, that fits every limit on the
// counters found plus the jobs admitted before it.
func decide(found []count, jobs []reserveJob) []decision {
	running := slices.Clone(found)
	out := make([]decision, len(jobs))
	for r, j := range jobs {
		out[r].got = slices.Clone(running)
		out[r].ok = allFit(j.asks, running)
		if out[r].ok {
			for i, a := range j.asks {
				running[i].reserved += a.n
			}
		}
	}
	return out
}

// reserveMany is reserveRound's transaction for two or more jobs, in two
// round trips on one connection: the first creates and locks the
// counters and reads them, the jobs are decided (decide), the second
// raises the counters by what the admitted jobs reserve, records each
// admitted job's lease and commits.
func reserveMany(ctx context.Context, pool *pgxpool.Pool, jobs []reserveJob) (out []decision, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("reserving for %d requests: %w", len(jobs), err)
		}
	}()
	first := jobs[0].asks
	order := sorted(first)
	buckets, starts, ends, _, _ := columns(first, order)
	found := make([]count, len(first))
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Release() // a connection left in a transaction is closed, not reused
	b := &pgx.Batch{}
	b.Queue(`BEGIN`)
	b.Queue(`SET LOCAL synchronous_commit = off`)
	b.Queue(`INSERT INTO spend_counters (bucket, window_start, window_end)
SELECT b, s, e FROM unnest($1::text[], $2::timestamptz[], $3::timestamptz[]) WITH ORDINALITY AS v(b, s, e, i) ORDER BY i
ON CONFLICT (bucket, window_start) DO NOTHING`, buckets, starts, ends)
	b.Queue(`SELECT c.used, c.reserved FROM unnest($1::text[], $2::timestamptz[]) WITH ORDINALITY AS v(b, s, i)
JOIN spend_counters c ON c.bucket = v.b AND c.window_start = v.s ORDER BY v.i FOR UPDATE OF c`, buckets, starts).Query(func(rows pgx.Rows) error {
		i := 0
		var c count
		_, err := pgx.ForEachRow(rows, []any{&c.used, &c.reserved}, func() error {
			if i < len(order) {
				found[order[i]] = c
			}
			i++
			return nil
		})
		if err == nil && i != len(order) {
			err = fmt.Errorf("%d of %d counters found", i, len(order))
		}
		return err
	})
	if err := conn.SendBatch(ctx, b).Close(); err != nil {
		return nil, err
	}
	out = decide(found, jobs)
	total := make([]int64, len(first))
	var rs []int32
	var bs []string
	var ss []time.Time
	var ns []int64
	var ids []uuid.UUID
	for r, j := range jobs {
		if !out[r].ok {
			continue
		}
		ids = append(ids, j.id)
		for i, a := range j.asks {
			total[i] += a.n
			rs, bs, ss, ns = append(rs, int32(len(ids))), append(bs, a.bucket), append(ss, a.start), append(ns, a.n)
		}
	}
	sums := make([]int64, len(order))
	for k, i := range order {
		sums[k] = total[i]
	}
	b = &pgx.Batch{}
	if len(ids) > 0 {
		b.Queue(`UPDATE spend_counters c SET reserved = c.reserved + v.n
FROM unnest($1::text[], $2::timestamptz[], $3::bigint[]) AS v(b, s, n) WHERE c.bucket = v.b AND c.window_start = v.s`, buckets, starts, sums)
		b.Queue(`INSERT INTO spend_reservations (id, buckets, starts, amounts, expires_at)
SELECT ($5::uuid[])[v.r], array_agg(v.b ORDER BY v.b, v.s), array_agg(v.s ORDER BY v.b, v.s), array_agg(v.n ORDER BY v.b, v.s), statement_timestamp() + $6 * interval '1 microsecond'
FROM unnest($1::int[], $2::text[], $3::timestamptz[], $4::bigint[]) AS v(r, b, s, n) GROUP BY v.r`, rs, bs, ss, ns, ids, jobs[0].lease.Microseconds())
	}
	b.Queue(`COMMIT`)
	if err := conn.SendBatch(ctx, b).Close(); err != nil {
		_, _ = conn.Exec(context.WithoutCancel(ctx), `ROLLBACK`)
		return nil, err
	}
	return out, nil
}

// settleRound settles the jobs of one group in one transaction.
func settleRound(ctx context.Context, pool *pgxpool.Pool, jobs []settleJob) {
	if len(jobs) == 1 {
		j := jobs[0]
		after, err := settle(ctx, pool, j.id, j.asks)
		j.reply <- settleReply{after: after, err: err}
		return
	}
	totals, err := settleMany(ctx, pool, jobs)
	// Each request's use after it, in arrival order: the total after the
	// round less what the later requests of the round used.
	for r, j := range jobs {
		if err != nil {
			j.reply <- settleReply{err: err}
			continue
		}
		after := make([]int64, len(j.asks))
		for i := range j.asks {
			after[i] = totals[i]
			for _, later := range jobs[r+1:] {
				after[i] -= later.asks[i].actual
			}
		}
		j.reply <- settleReply{after: after}
	}
}

// settleMany is settleRound's transaction for two or more jobs: the
// leases first, then the counters, locked in order (the sweep's order);
// a lease the sweep already released is not released twice. It returns
// each counter's use after the round, in the asks' order.
func settleMany(ctx context.Context, pool *pgxpool.Pool, jobs []settleJob) ([]int64, error) {
	first := jobs[0].asks
	order := sorted(first)
	buckets, starts, _, _, _ := columns(first, order)
	var bs []string
	var ss []time.Time
	var ns, as []int64
	var owners []uuid.UUID
	ids := make([]uuid.UUID, len(jobs))
	for r, j := range jobs {
		ids[r] = j.id
		for _, a := range j.asks {
			bs, ss, ns, as, owners = append(bs, a.bucket), append(ss, a.start), append(ns, a.n), append(as, a.actual), append(owners, j.id)
		}
	}
	totals := make([]int64, len(first))
	at := map[string]int{}
	for i, a := range first {
		at[a.bucket+"\x00"+a.start.UTC().String()] = i
	}
	b := &pgx.Batch{}
	b.Queue(`BEGIN`)
	b.Queue(`SET LOCAL synchronous_commit = off`)
	b.Queue(`SELECT 1 FROM spend_reservations WHERE id = ANY($1) ORDER BY id FOR UPDATE`, ids)
	b.Queue(`SELECT 1 FROM unnest($1::text[], $2::timestamptz[]) WITH ORDINALITY AS v(b, s, i)
JOIN spend_counters c ON c.bucket = v.b AND c.window_start = v.s ORDER BY v.i FOR UPDATE OF c`, buckets, starts)
	b.Queue(`WITH gone AS (DELETE FROM spend_reservations WHERE id = ANY($6) RETURNING id),
v AS (SELECT * FROM unnest($1::text[], $2::timestamptz[], $3::bigint[], $4::bigint[], $5::uuid[]) AS v(b, s, n, a, id)),
x AS (SELECT v.b, v.s, sum(v.a) AS a, sum(CASE WHEN v.id IN (SELECT id FROM gone) THEN v.n ELSE 0 END) AS rel FROM v GROUP BY v.b, v.s)
UPDATE spend_counters c SET reserved = GREATEST(c.reserved - x.rel, 0), used = c.used + x.a
FROM x WHERE c.bucket = x.b AND c.window_start = x.s
RETURNING c.bucket, c.window_start, c.used`, bs, ss, ns, as, owners, ids).Query(func(rows pgx.Rows) error {
		var bucket string
		var start time.Time
		var used int64
		_, err := pgx.ForEachRow(rows, []any{&bucket, &start, &used}, func() error {
			if i, ok := at[bucket+"\x00"+start.UTC().String()]; ok {
				totals[i] = used
			}
			return nil
		})
		return err
	})
	b.Queue(`COMMIT`)
	if err := pool.SendBatch(ctx, b).Close(); err != nil {
		return nil, fmt.Errorf("settling %d requests: %w", len(jobs), err)
	}
	return totals, nil
}
