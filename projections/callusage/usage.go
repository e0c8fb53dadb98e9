package callusage

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/domain/usage"
	"github.com/arr-dev/arr/projections"
)

// Projection is the read model of metered calls: per account, key, service and
// UTC day, the calls the quotas admitted (the sum of CallsCounted events).
// It backs the account pages' "usage of the last 30 days".
type Projection struct{}

// Name is the usage projection's name and checkpoint key.
const Name = "usage"

// ddl is the read model's tables. The primary key serves the per-account
// reports and the batch upserts.
const ddl = `
CREATE TABLE usage_daily (
    account_id    uuid   NOT NULL,
    day           date   NOT NULL,
    service       text   NOT NULL,
    key_id        uuid   NOT NULL,
    calls         bigint NOT NULL,
    last_position bigint NOT NULL,
    PRIMARY KEY (account_id, day, service, key_id)
);
`

// deferredDDL is the read model's secondary indexes.
const deferredDDL = `CREATE INDEX usage_daily_key ON usage_daily (key_id, day);`

type usageSlot struct {
	account, key uuid.UUID
	service      string
	day          string
}

// Spec implements projections.Projection: the batch is summed per slot in memory and
// written with one upsert.
func (Projection) Spec() projections.Spec {
	return projections.Spec{Name: Name, DDL: ddl, DeferredDDL: deferredDDL, Batch: newBatch}
}

// newBatch begins a batch: its handler gathers, its flush writes.
func newBatch() projections.Batch {
	sums := map[usageSlot]*[2]int64{} // calls, last position
	var order []usageSlot
	add := func(ctx context.Context, tx pgx.Tx, e projections.Event, p *usage.CallsCounted) error {
		v := *p
		s := usageSlot{v.AccountID, v.KeyID, string(v.Service), v.Day}
		agg := sums[s]
		if agg == nil {
			agg = &[2]int64{}
			sums[s] = agg
			order = append(order, s)
		}
		agg[0] += v.Calls
		agg[1] = int64(e.Position)
		return nil
	}
	flush := func(ctx context.Context, tx pgx.Tx) error {
		if len(order) == 0 {
			return nil
		}
		n := len(order)
		accounts, keys := make([]uuid.UUID, n), make([]uuid.UUID, n)
		services, days := make([]string, n), make([]string, n)
		calls, pos := make([]int64, n), make([]int64, n)
		for i, s := range order {
			accounts[i], keys[i], services[i], days[i] = s.account, s.key, s.service, s.day
			calls[i], pos[i] = sums[s][0], sums[s][1]
		}
		_, err := tx.Exec(ctx, `INSERT INTO usage_daily AS u (account_id, day, service, key_id, calls, last_position)
			SELECT a, d::date, s, k, c, p FROM unnest($1::uuid[], $2::text[], $3::text[], $4::uuid[], $5::bigint[], $6::bigint[]) AS t(a, d, s, k, c, p)
			ON CONFLICT (account_id, day, service, key_id) DO UPDATE SET calls = u.calls + excluded.calls, last_position = excluded.last_position`,
			accounts, days, services, keys, calls, pos)
		if err != nil {
			return fmt.Errorf("upserting usage: %w", err)
		}
		return nil
	}
	return projections.Batch{Handlers: []projections.Handler{projections.On(add)}, Flush: flush}
}

// DailyCalls is the number of calls of one UTC day (and one service, in
// per-account reports).
type DailyCalls struct {
	Day     string          `json:"day"` // YYYY-MM-DD, UTC
	Service account.Service `json:"service,omitempty"`
	Calls   int64           `json:"calls"`
}

// KeyDailyCalls is one key's calls on one UTC day.
type KeyDailyCalls struct {
	KeyID   uuid.UUID       `json:"key_id"`
	Service account.Service `json:"service"`
	Day     string          `json:"day"`
	Calls   int64           `json:"calls"`
}

// Queries reads the usage read model. Safe for concurrent use.
type Queries struct{ pool projections.DB }

// NewQueries returns the queries over the usage read model.
func NewQueries(pool projections.DB) *Queries { return &Queries{pool: pool} }

// Account reports an account's calls of the last `days` UTC days up to
// now's, per day and service, every day and service present (zero when
// there were none): oldest day first, services in account.Services() order.
func (q *Queries) Account(ctx context.Context, accountID uuid.UUID, days int, now time.Time) ([]DailyCalls, error) {
	first, last, err := usage.DayRange(days, now)
	if err != nil {
		return nil, err
	}
	var services []string
	for _, s := range account.Services() {
		services = append(services, string(s))
	}
	rows, err := q.pool.Query(ctx, `
		SELECT to_char(d, 'YYYY-MM-DD'), s.service, coalesce(u.calls, 0)
		FROM generate_series($2::date, $3::date, interval '1 day') AS d
		CROSS JOIN unnest($4::text[]) WITH ORDINALITY AS s(service, ord)
		LEFT JOIN (SELECT day, service, sum(calls)::bigint AS calls FROM rm_usage.usage_daily
		           WHERE account_id = $1 AND day BETWEEN $2::date AND $3::date GROUP BY day, service) u
		       ON u.day = d::date AND u.service = s.service
		ORDER BY d, s.ord`, accountID, first, last, services)
	if err != nil {
		return nil, fmt.Errorf("reading usage: %w", err)
	}
	return collectDaily(rows)
}

// Key reports one key's calls of the last `days` UTC days up to now's, one
// row per day (zero when there were none), oldest first.
func (q *Queries) Key(ctx context.Context, keyID uuid.UUID, days int, now time.Time) ([]DailyCalls, error) {
	first, last, err := usage.DayRange(days, now)
	if err != nil {
		return nil, err
	}
	rows, err := q.pool.Query(ctx, `
		SELECT to_char(d, 'YYYY-MM-DD'), ''::text, coalesce((SELECT sum(calls)::bigint FROM rm_usage.usage_daily u
		                                                  WHERE u.key_id = $1 AND u.day = d::date), 0)
		FROM generate_series($2::date, $3::date, interval '1 day') AS d
		ORDER BY d`, keyID, first, last)
	if err != nil {
		return nil, fmt.Errorf("reading key usage: %w", err)
	}
	return collectDaily(rows)
}

// AccountKeys lists, for each of an account's keys that made calls in the
// last `days` UTC days, its calls per day (days without calls are left
// out), by day, then service, then key.
func (q *Queries) AccountKeys(ctx context.Context, accountID uuid.UUID, days int, now time.Time) ([]KeyDailyCalls, error) {
	first, last, err := usage.DayRange(days, now)
	if err != nil {
		return nil, err
	}
	rows, err := q.pool.Query(ctx, `
		SELECT key_id, service, to_char(day, 'YYYY-MM-DD'), calls FROM rm_usage.usage_daily
		WHERE account_id = $1 AND day BETWEEN $2::date AND $3::date
		ORDER BY day, service, key_id`, accountID, first, last)
	if err != nil {
		return nil, fmt.Errorf("reading key usage: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (KeyDailyCalls, error) {
		var k KeyDailyCalls
		err := r.Scan(&k.KeyID, &k.Service, &k.Day, &k.Calls)
		return k, err
	})
	if err != nil {
		return nil, fmt.Errorf("reading key usage: %w", err)
	}
	return out, nil
}

func collectDaily(rows pgx.Rows) ([]DailyCalls, error) {
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (DailyCalls, error) {
		var d DailyCalls
		err := r.Scan(&d.Day, &d.Service, &d.Calls)
		return d, err
	})
	if err != nil {
		return nil, fmt.Errorf("reading usage: %w", err)
	}
	return out, nil
}
