package gatewayusage

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/audit"
	"github.com/arr-dev/arr/projections"
)

// Projection is the read model of completions per account, UTC day and
// tier: requests, tokens (the prompt's prompt-cache reads and writes
// among them), cost and cache hits, summed from
// CompletionRecorded. It answers GET /v1/usage.
type Projection struct{}

// Name is the projection's name and checkpoint key.
const Name = "gateway_usage"

// ddl is the read model's tables.
const ddl = `
CREATE TABLE daily (
    account_id        uuid   NOT NULL,
    day               date   NOT NULL,
    tier              text   NOT NULL,
    key_id            uuid   NOT NULL,
    requests          bigint NOT NULL,
    prompt_tokens     bigint NOT NULL,
    completion_tokens bigint NOT NULL,
    cost_micro_usd    bigint NOT NULL,
    cache_hits        bigint NOT NULL,
    streams           bigint NOT NULL,
    last_position     bigint NOT NULL,
    cache_read_tokens  bigint NOT NULL,
    cache_write_tokens bigint NOT NULL,
    PRIMARY KEY (account_id, day, tier, key_id)
);
`

type gwSlot struct {
	account uuid.UUID
	day     string
	tier    string
	key     uuid.UUID
}

// Spec implements projections.Projection: the batch is summed per slot in memory and
// written with one upsert.
func (Projection) Spec() projections.Spec {
	return projections.Spec{Name: Name, DDL: ddl, Batch: newBatch}
}

// newBatch begins a batch: its handler gathers, its flush writes.
func newBatch() projections.Batch {
	sums := map[gwSlot]*[9]int64{}
	var order []gwSlot
	add := func(ctx context.Context, tx pgx.Tx, e projections.Event, p *audit.CompletionRecorded) error {
		r := *p
		c, err := r.DecodePayload()
		if err != nil {
			return fmt.Errorf("event %d: %w", e.Position, err)
		}
		if c.Outcome == "refused" && c.Model == "" {
			return nil // a guardrail refused it before any upstream: not usage
		}
		s := gwSlot{c.AccountID, c.Day(), c.Tier, c.KeyID}
		a := sums[s]
		if a == nil {
			a = &[9]int64{}
			sums[s] = a
			order = append(order, s)
		}
		a[0]++
		a[1] += c.PromptTokens
		a[2] += c.CompletionTokens
		a[3] += c.CostMicroUSD
		if c.CacheHit {
			a[4]++
		}
		if c.Stream {
			a[5]++
		}
		a[6] = int64(e.Position)
		a[7] += c.CacheReadTokens
		a[8] += c.CacheWriteTokens
		return nil
	}
	flush := func(ctx context.Context, tx pgx.Tx) error {
		if len(order) == 0 {
			return nil
		}
		n := len(order)
		accounts, days, tiers, keys := make([]uuid.UUID, n), make([]string, n), make([]string, n), make([]uuid.UUID, n)
		cols := make([][]int64, 9)
		for i := range cols {
			cols[i] = make([]int64, n)
		}
		for i, s := range order {
			accounts[i], days[i], tiers[i], keys[i] = s.account, s.day, s.tier, s.key
			for j := range cols {
				cols[j][i] = sums[s][j]
			}
		}
		_, err := tx.Exec(ctx, `INSERT INTO daily AS d (account_id, day, tier, key_id, requests, prompt_tokens, completion_tokens, cost_micro_usd, cache_hits, streams, last_position, cache_read_tokens, cache_write_tokens)
			SELECT a, dy::date, t, k, r, p, c, m, h, s, l, cr, cw FROM unnest($1::uuid[], $2::text[], $3::text[], $11::uuid[], $4::bigint[], $5::bigint[], $6::bigint[], $7::bigint[], $8::bigint[], $9::bigint[], $10::bigint[], $12::bigint[], $13::bigint[])
				AS x(a, dy, t, k, r, p, c, m, h, s, l, cr, cw)
			ON CONFLICT (account_id, day, tier, key_id) DO UPDATE SET requests = d.requests + excluded.requests,
				prompt_tokens = d.prompt_tokens + excluded.prompt_tokens, completion_tokens = d.completion_tokens + excluded.completion_tokens,
				cost_micro_usd = d.cost_micro_usd + excluded.cost_micro_usd, cache_hits = d.cache_hits + excluded.cache_hits,
				streams = d.streams + excluded.streams, last_position = excluded.last_position,
				cache_read_tokens = d.cache_read_tokens + excluded.cache_read_tokens, cache_write_tokens = d.cache_write_tokens + excluded.cache_write_tokens`,
			accounts, days, tiers, cols[0], cols[1], cols[2], cols[3], cols[4], cols[5], cols[6], keys, cols[7], cols[8])
		if err != nil {
			return fmt.Errorf("upserting gateway usage: %w", err)
		}
		return nil
	}
	return projections.Batch{Handlers: []projections.Handler{projections.On(add)}, Flush: flush}
}

// UsageCounts are the sums of one day (or one tier of one day).
type UsageCounts struct {
	Requests         int64 `json:"requests"`
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	// CacheReadTokens and CacheWriteTokens are the prompt tokens read from
	// and written to the upstreams' prompt caches (part of PromptTokens).
	CacheReadTokens  int64   `json:"cache_read_tokens"`
	CacheWriteTokens int64   `json:"cache_write_tokens"`
	TotalTokens      int64   `json:"total_tokens"`
	CostMicroUSD     int64   `json:"cost_micro_usd"`
	CostUSD          float64 `json:"cost_usd"`
	CacheHits        int64   `json:"cache_hits"`
	Streams          int64   `json:"streams"`
}

func (u *UsageCounts) add(o UsageCounts) {
	u.Requests += o.Requests
	u.PromptTokens += o.PromptTokens
	u.CompletionTokens += o.CompletionTokens
	u.CacheReadTokens += o.CacheReadTokens
	u.CacheWriteTokens += o.CacheWriteTokens
	u.TotalTokens += o.TotalTokens
	u.CostMicroUSD += o.CostMicroUSD
	u.CostUSD = float64(u.CostMicroUSD) / 1e6
	u.CacheHits += o.CacheHits
	u.Streams += o.Streams
}

// UsageDay is one UTC day of the rollup.
type UsageDay struct {
	Day string `json:"day"`
	UsageCounts
	ByTier map[string]UsageCounts `json:"by_tier"`
}

// UsageRollup is an account's completions over a window of days.
type UsageRollup struct {
	From   string                 `json:"from"`
	To     string                 `json:"to"`
	Total  UsageCounts            `json:"total"`
	ByTier map[string]UsageCounts `json:"by_tier"`
	// ByKey is the window's sums per key id.
	ByKey map[string]UsageCounts `json:"by_key"`
	Days  []UsageDay             `json:"days"`
}

// MaxDays bounds GET /v1/usage's window.
const MaxDays = 90

// Queries reads the gateway usage read model. Safe for
// concurrent use.
type Queries struct{ pool projections.DB }

// NewQueries returns the queries.
func NewQueries(pool projections.DB) *Queries {
	return &Queries{pool: pool}
}

// Rollup returns the account's last `days` UTC days up to now's, every day
// present (zeros when idle), oldest first.
func (q *Queries) Rollup(ctx context.Context, accountID uuid.UUID, days int, now time.Time) (UsageRollup, error) {
	if days < 1 || days > MaxDays {
		return UsageRollup{}, domain.Invalid("invalid_days", "days", "days must be an integer from 1 to %d; got %d", MaxDays, days)
	}
	last := now.UTC().Truncate(24 * time.Hour)
	first := last.AddDate(0, 0, -(days - 1))
	r := UsageRollup{From: first.Format("2006-01-02"), To: last.Format("2006-01-02"), ByTier: map[string]UsageCounts{}, ByKey: map[string]UsageCounts{}}
	idx := map[string]int{}
	for d := first; !d.After(last); d = d.AddDate(0, 0, 1) {
		idx[d.Format("2006-01-02")] = len(r.Days)
		r.Days = append(r.Days, UsageDay{Day: d.Format("2006-01-02"), ByTier: map[string]UsageCounts{}})
	}
	rows, err := q.pool.Query(ctx, `SELECT to_char(day, 'YYYY-MM-DD'), tier, key_id, requests, prompt_tokens, completion_tokens, cost_micro_usd, cache_hits, streams,
			cache_read_tokens, cache_write_tokens FROM rm_gateway_usage.daily WHERE account_id = $1 AND day BETWEEN $2::date AND $3::date ORDER BY day, tier`, accountID, r.From, r.To)
	if err != nil {
		return r, fmt.Errorf("reading gateway usage: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var day, tier string
		var key uuid.UUID
		var c UsageCounts
		if err := rows.Scan(&day, &tier, &key, &c.Requests, &c.PromptTokens, &c.CompletionTokens, &c.CostMicroUSD, &c.CacheHits, &c.Streams,
			&c.CacheReadTokens, &c.CacheWriteTokens); err != nil {
			return r, fmt.Errorf("reading gateway usage: %w", err)
		}
		c.TotalTokens = c.PromptTokens + c.CompletionTokens
		c.CostUSD = float64(c.CostMicroUSD) / 1e6
		d := &r.Days[idx[day]]
		dt := d.ByTier[tier]
		dt.add(c)
		d.ByTier[tier] = dt
		d.add(c)
		t := r.ByTier[tier]
		t.add(c)
		r.ByTier[tier] = t
		k := r.ByKey[key.String()]
		k.add(c)
		r.ByKey[key.String()] = k
		r.Total.add(c)
	}
	return r, rows.Err()
}
