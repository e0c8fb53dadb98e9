package answerusage

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/arr-dev/arr/domain/answer"
	"github.com/arr-dev/arr/domain/usage"
	"github.com/arr-dev/arr/projections"
)

// Projection is the answer service's usage per key and UTC day: answers
// served, and how many of them came from the cache (AnswerServed events).
type Projection struct{}

// Name is the projection's name and checkpoint key.
const Name = "answer_usage"

// ddl is the read model's tables.
const ddl = `
CREATE TABLE answer_usage_daily (
    account_id    uuid   NOT NULL,
    day           date   NOT NULL,
    key_id        uuid   NOT NULL,
    served        bigint NOT NULL,
    cached        bigint NOT NULL,
    deep          bigint NOT NULL,
    last_position bigint NOT NULL,
    PRIMARY KEY (account_id, day, key_id)
);
`

type answerSlot struct {
	account, key uuid.UUID
	day          string
}

// Spec implements projections.Projection.
func (Projection) Spec() projections.Spec {
	return projections.Spec{Name: Name, DDL: ddl, Batch: newBatch}
}

// newBatch begins a batch: its handler gathers, its flush writes.
func newBatch() projections.Batch {
	sums := map[answerSlot]*[4]int64{} // served, cached, deep, position
	var order []answerSlot
	add := func(ctx context.Context, tx pgx.Tx, e projections.Event, p *answer.AnswerServed) error {
		v := *p
		s := answerSlot{v.AccountID, v.KeyID, usage.Day(v.ServedAt)}
		agg := sums[s]
		if agg == nil {
			agg = &[4]int64{}
			sums[s] = agg
			order = append(order, s)
		}
		agg[0]++
		if v.Cached {
			agg[1]++
		}
		if v.Mode == answer.Deep {
			agg[2]++
		}
		agg[3] = int64(e.Position)
		return nil
	}
	flush := func(ctx context.Context, tx pgx.Tx) error {
		if len(order) == 0 {
			return nil
		}
		n := len(order)
		accounts, keys, days := make([]uuid.UUID, n), make([]uuid.UUID, n), make([]string, n)
		served, cached, deep, pos := make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
		for i, s := range order {
			accounts[i], keys[i], days[i] = s.account, s.key, s.day
			a := sums[s]
			served[i], cached[i], deep[i], pos[i] = a[0], a[1], a[2], a[3]
		}
		_, err := tx.Exec(ctx, `INSERT INTO answer_usage_daily AS u (account_id, day, key_id, served, cached, deep, last_position)
			SELECT a, d::date, k, s, c, dp, p FROM unnest($1::uuid[], $2::text[], $3::uuid[], $4::bigint[], $5::bigint[], $6::bigint[], $7::bigint[]) AS t(a, d, k, s, c, dp, p)
			ON CONFLICT (account_id, day, key_id) DO UPDATE SET served = u.served + excluded.served, cached = u.cached + excluded.cached,
			  deep = u.deep + excluded.deep, last_position = excluded.last_position`,
			accounts, days, keys, served, cached, deep, pos)
		if err != nil {
			return fmt.Errorf("upserting answer usage: %w", err)
		}
		return nil
	}
	return projections.Batch{Handlers: []projections.Handler{projections.On(add)}, Flush: flush}
}

// KeyDayAnswers is one key's answers of one UTC day.
type KeyDayAnswers struct {
	KeyID  uuid.UUID `json:"key_id"`
	Day    string    `json:"day"`
	Served int64     `json:"served"`
	Cached int64     `json:"cached"`
	Deep   int64     `json:"deep"`
}

// ByKey lists an account's answers per key and UTC day over the
// last `days` days up to now's, newest day first (days without answers
// left out).
func (q *Queries) ByKey(ctx context.Context, accountID uuid.UUID, days int, now time.Time) ([]KeyDayAnswers, error) {
	first, last, err := usage.DayRange(days, now)
	if err != nil {
		return nil, err
	}
	rows, err := q.pool.Query(ctx, `SELECT key_id, to_char(day, 'YYYY-MM-DD'), served, cached, deep FROM rm_answer_usage.answer_usage_daily
		WHERE account_id = $1 AND day BETWEEN $2::date AND $3::date ORDER BY day DESC, key_id`, accountID, first, last)
	if err != nil {
		return nil, fmt.Errorf("reading answer usage: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (KeyDayAnswers, error) {
		var k KeyDayAnswers
		err := r.Scan(&k.KeyID, &k.Day, &k.Served, &k.Cached, &k.Deep)
		return k, err
	})
	if err != nil {
		return nil, fmt.Errorf("reading answer usage: %w", err)
	}
	return out, nil
}

// Queries reads the answer-usage read model.
type Queries struct{ pool projections.DB }

// NewQueries reads through pool.
func NewQueries(pool projections.DB) *Queries { return &Queries{pool: pool} }
