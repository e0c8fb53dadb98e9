package spend

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// reserveRound reserves for the jobs of one group (the same counters and
// limits), in one transaction: alone, as reserve; together, the longest
// run of them, in arrival order, that fits every limit.
//
// A request whose plan count was left to its reservation (reserveJob.quota)
// has it counted in the same transaction when it has the round to itself
// (one round trip for the key, its limits and its quota); in a round of
// several, each such count takes a round trip of its own first (a
// request the quota refuses leaves the round).
func reserveRound(ctx context.Context, pool *pgxpool.Pool, jobs []reserveJob) {
	if len(jobs) == 1 {
		j := jobs[0]
		got, ok, err := reserve(ctx, pool, j.id, j.expires, j.asks, j.quota)
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
	counts, upto, err := reserveMany(ctx, pool, jobs)
	for r, j := range jobs {
		if err != nil {
			j.reply <- reserveReply{err: err}
			continue
		}
		// What the request found: the counters and the reservations of
		// the requests of the round admitted before it.
		got := make([]count, len(j.asks))
		for i := range j.asks {
			got[i] = counts[i]
			for _, before := range jobs[:min(r, upto)] {
				got[i].reserved += before.asks[i].n
			}
		}
		j.reply <- reserveReply{got: got, ok: r < upto}
	}
}

// reserveMany is reserveRound's transaction for two or more jobs: it
// returns the counters as found (in the asks' order) and how many jobs,
// from the first, it admitted.
func reserveMany(ctx context.Context, pool *pgxpool.Pool, jobs []reserveJob) ([]count, int, error) {
	first := jobs[0].asks
	order := sorted(first)
	buckets, starts, ends, _, _ := columns(first, order)
	var rs []int32
	var bs []string
	var ss []time.Time
	var ns, lims []int64
	ids := make([]uuid.UUID, len(jobs))
	for r, j := range jobs {
		ids[r] = j.id
		for _, a := range j.asks {
			rs, bs, ss, ns, lims = append(rs, int32(r+1)), append(bs, a.bucket), append(ss, a.start), append(ns, a.n), append(lims, a.limit)
		}
	}
	counts := make([]count, len(first))
	upto := 0
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
				counts[order[i]] = c
			}
			i++
			return nil
		})
		return err
	})
	b.Queue(reserveManySQL, rs, bs, ss, ns, lims, ids, jobs[0].expires, len(jobs)).QueryRow(func(row pgx.Row) error {
		return row.Scan(&upto)
	})
	b.Queue(`COMMIT`)
	if err := pool.SendBatch(ctx, b).Close(); err != nil {
		return nil, 0, fmt.Errorf("reserving for %d requests: %w", len(jobs), err)
	}
	return counts, upto, nil
}

// reserveManySQL admits requests 1..upto, where upto+1 is the first
// request whose running total, with the requests before it, passes a
// limit in some counter (the counters are locked); it raises the
// counters' reservations by the admitted requests' amounts and records
// each admitted request's lease.
const reserveManySQL = `WITH v AS (SELECT * FROM unnest($1::int[], $2::text[], $3::timestamptz[], $4::bigint[], $5::bigint[]) AS v(r, b, s, n, lim)),
cum AS (SELECT v.r, v.b, v.s, v.lim, sum(v.n) OVER (PARTITION BY v.b, v.s ORDER BY v.r) AS c FROM v),
bad AS (SELECT min(cum.r) AS r FROM cum JOIN spend_counters d ON d.bucket = cum.b AND d.window_start = cum.s
	WHERE d.used + d.reserved + cum.c > cum.lim),
ok AS (SELECT coalesce((SELECT r FROM bad), $8 + 1) - 1 AS upto),
up AS (UPDATE spend_counters c SET reserved = c.reserved + x.n
	FROM (SELECT v.b, v.s, sum(v.n) AS n FROM v, ok WHERE v.r <= ok.upto GROUP BY v.b, v.s) x
	WHERE c.bucket = x.b AND c.window_start = x.s RETURNING 1),
lease AS (INSERT INTO spend_reservations (id, buckets, starts, amounts, expires_at)
	SELECT ($6::uuid[])[v.r], array_agg(v.b ORDER BY v.b, v.s), array_agg(v.s ORDER BY v.b, v.s), array_agg(v.n ORDER BY v.b, v.s), $7
	FROM v, ok WHERE v.r <= ok.upto GROUP BY v.r RETURNING 1)
SELECT upto FROM ok`

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
