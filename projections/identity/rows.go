package identity

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// accountRow is a new row of accounts.
type accountRow struct {
	id        uuid.UUID
	email     string
	plan      string
	createdAt time.Time
	customer  *string
	changedAt *time.Time
	budget    int64
	// budgetPeriod is "" without a budget.
	budgetPeriod string
	pos          int64
}

func (accountRow) table() string { return "accounts" }

func (accountRow) columns() []string {
	return []string{"account_id", "email", "plan", "created_at", "stripe_customer_id", "plan_changed_at", "budget_micro_usd", "budget_period", "position"}
}

func (r accountRow) values() []any {
	return []any{r.id, r.email, r.plan, r.createdAt, r.customer, r.changedAt, r.budget, r.budgetPeriod, r.pos}
}

// limitsRow is a key's limits: part of a new key's row, or a change of an
// earlier key's.
type limitsRow struct {
	id      uuid.UUID
	budget  int64
	period  string
	rpm     int64
	tpm     int64
	models  []string
	expires *time.Time
	pos     int64
}

// budgetRow changes the budget of an account of an earlier batch.
type budgetRow struct {
	id     uuid.UUID
	budget int64
	period string
	pos    int64
}

// sessionRow is a new row of sessions.
type sessionRow struct {
	id        uuid.UUID
	accountID uuid.UUID
	service   string
	tokenHash string
	startedAt time.Time
	expiresAt time.Time
	endedAt   *time.Time
	pos       int64
}

func (sessionRow) table() string { return "sessions" }

func (sessionRow) columns() []string {
	return []string{"session_id", "account_id", "service", "token_hash", "started_at", "expires_at", "ended_at", "position"}
}

func (r sessionRow) values() []any {
	return []any{r.id, r.accountID, r.service, r.tokenHash, r.startedAt, r.expiresAt, r.endedAt, r.pos}
}

// keyRow is a new row of api_keys.
type keyRow struct {
	id         uuid.UUID
	accountID  uuid.UUID
	service    string
	prefix     string
	hint       string
	secretHash string
	name       string
	issuedAt   time.Time
	revokedAt  *time.Time
	limits     limitsRow
	pos        int64
}

func (keyRow) table() string { return "api_keys" }

func (keyRow) columns() []string {
	return []string{"key_id", "account_id", "service", "prefix", "hint", "secret_hash", "name", "issued_at", "revoked_at",
		"max_budget_micro_usd", "budget_period", "rpm_limit", "tpm_limit", "models", "expires_at", "position"}
}

func (r keyRow) values() []any {
	l := r.limits
	return []any{r.id, r.accountID, r.service, r.prefix, r.hint, r.secretHash, r.name, r.issuedAt, r.revokedAt,
		l.budget, l.period, l.rpm, l.tpm, l.models, l.expires, r.pos}
}

// planRow changes the plan of an account of an earlier batch; a nil
// customer keeps the account's.
type planRow struct {
	id       uuid.UUID
	plan     string
	customer *string
	at       time.Time
	pos      int64
}

// stampRow ends a row of an earlier batch at a time, unless it has ended:
// a session's end or a key's revocation.
type stampRow struct {
	id  uuid.UUID
	at  time.Time
	pos int64
}

const (
	changePlans = `UPDATE accounts a SET plan = c.plan, stripe_customer_id = coalesce(c.customer, a.stripe_customer_id),
		plan_changed_at = c.at, position = c.pos
	FROM unnest($1::uuid[], $2::text[], $3::text[], $4::timestamptz[], $5::bigint[]) AS c(id, plan, customer, at, pos)
	WHERE a.account_id = c.id`
	endSessions = `UPDATE sessions s SET ended_at = e.at, position = e.pos
	FROM unnest($1::uuid[], $2::timestamptz[], $3::bigint[]) AS e(id, at, pos)
	WHERE s.session_id = e.id AND s.ended_at IS NULL`
	revokeKeys = `UPDATE api_keys k SET revoked_at = r.at, position = r.pos
	FROM unnest($1::uuid[], $2::timestamptz[], $3::bigint[]) AS r(id, at, pos)
	WHERE k.key_id = r.id AND k.revoked_at IS NULL`
	// setLimits takes each key's models as one comma-joined text (models
	// hold no commas: account.KeyLimits.Validate), as unnest cannot take
	// an array of arrays of different lengths.
	setLimits = `UPDATE api_keys k SET max_budget_micro_usd = l.budget, budget_period = l.period, rpm_limit = l.rpm,
		tpm_limit = l.tpm, models = CASE WHEN l.models = '' THEN '{}'::text[] ELSE string_to_array(l.models, ',') END,
		expires_at = l.expires, position = GREATEST(k.position, l.pos)
	FROM unnest($1::uuid[], $2::bigint[], $3::text[], $4::bigint[], $5::bigint[], $6::text[], $7::timestamptz[], $8::bigint[])
		AS l(id, budget, period, rpm, tpm, models, expires, pos)
	WHERE k.key_id = l.id`
	// The other UPDATEs of a batch may have moved a row's position past
	// these changes' (a plan change after a budget): the latest wins.
	setBudgets = `UPDATE accounts a SET budget_micro_usd = b.budget, budget_period = b.period, position = GREATEST(a.position, b.pos)
	FROM unnest($1::uuid[], $2::bigint[], $3::text[], $4::bigint[]) AS b(id, budget, period, pos)
	WHERE a.account_id = b.id`
)

// limitsColumns are the unnest arrays of limits rows, in setLimits' order.
func limitsColumns(rows []limitsRow) []any {
	return []any{column(rows, func(r limitsRow) uuid.UUID { return r.id }), column(rows, func(r limitsRow) int64 { return r.budget }),
		column(rows, func(r limitsRow) string { return r.period }), column(rows, func(r limitsRow) int64 { return r.rpm }),
		column(rows, func(r limitsRow) int64 { return r.tpm }), column(rows, func(r limitsRow) string { return strings.Join(r.models, ",") }),
		column(rows, func(r limitsRow) *time.Time { return r.expires }), column(rows, func(r limitsRow) int64 { return r.pos })}
}

// budgetColumns are the unnest arrays of budget rows, in setBudgets' order.
func budgetColumns(rows []budgetRow) []any {
	return []any{column(rows, func(r budgetRow) uuid.UUID { return r.id }), column(rows, func(r budgetRow) int64 { return r.budget }),
		column(rows, func(r budgetRow) string { return r.period }), column(rows, func(r budgetRow) int64 { return r.pos })}
}

// flush writes the batch: new rows with COPY (the runner applies each
// event exactly once, so there is nothing to conflict with), changes with
// one UPDATE over unnest per table, at most seven statements in all. A
// batch that revokes a key or changes a plan of an earlier batch is
// announced on Channel, delivered on commit: every process caching
// principals drops them.
func (b *batch) flush(ctx context.Context, tx pgx.Tx) error {
	if err := copyRows(ctx, tx, b.accounts.rows); err != nil {
		return fmt.Errorf("inserting accounts: %w", err)
	}
	if err := update(ctx, tx, changePlans, b.plans.rows, planColumns(b.plans.rows)...); err != nil {
		return fmt.Errorf("changing plans: %w", err)
	}
	if err := copyRows(ctx, tx, b.sessions.rows); err != nil {
		return fmt.Errorf("inserting sessions: %w", err)
	}
	if err := update(ctx, tx, endSessions, b.ends, stampColumns(b.ends)...); err != nil {
		return fmt.Errorf("ending sessions: %w", err)
	}
	if err := copyRows(ctx, tx, b.keys.rows); err != nil {
		return fmt.Errorf("inserting keys: %w", err)
	}
	if err := update(ctx, tx, revokeKeys, b.revokes, stampColumns(b.revokes)...); err != nil {
		return fmt.Errorf("revoking keys: %w", err)
	}
	if err := update(ctx, tx, setLimits, b.limits.rows, limitsColumns(b.limits.rows)...); err != nil {
		return fmt.Errorf("setting key limits: %w", err)
	}
	if err := update(ctx, tx, setBudgets, b.budgets.rows, budgetColumns(b.budgets.rows)...); err != nil {
		return fmt.Errorf("setting account budgets: %w", err)
	}
	if len(b.revokes) == 0 && len(b.plans.rows) == 0 && len(b.limits.rows) == 0 && len(b.budgets.rows) == 0 {
		return nil
	}
	if _, err := tx.Exec(ctx, `SELECT pg_notify($1, '')`, Channel); err != nil {
		return fmt.Errorf("announcing identity changes: %w", err)
	}
	return nil
}

// newRow is a row struct of one table, written with COPY.
type newRow interface {
	table() string
	columns() []string
	values() []any
}

// copyRows COPYs rows into their table; nothing for no rows.
func copyRows[R newRow](ctx context.Context, tx pgx.Tx, rows []R) error {
	if len(rows) == 0 {
		return nil
	}
	var r R
	_, err := tx.CopyFrom(ctx, pgx.Identifier{r.table()}, r.columns(), pgx.CopyFromSlice(len(rows), func(i int) ([]any, error) {
		return rows[i].values(), nil
	}))
	return err
}

// update runs sql with its unnest arrays when there are rows.
func update[R any](ctx context.Context, tx pgx.Tx, sql string, rows []R, arrays ...any) error {
	if len(rows) == 0 {
		return nil
	}
	_, err := tx.Exec(ctx, sql, arrays...)
	return err
}

// column is one field of rows as a typed array, for unnest.
func column[R, V any](rows []R, field func(R) V) []V {
	out := make([]V, len(rows))
	for i, r := range rows {
		out[i] = field(r)
	}
	return out
}

// planColumns are the unnest arrays of plan rows, in changePlans' order.
func planColumns(rows []planRow) []any {
	return []any{column(rows, func(r planRow) uuid.UUID { return r.id }), column(rows, func(r planRow) string { return r.plan }),
		column(rows, func(r planRow) *string { return r.customer }), column(rows, func(r planRow) time.Time { return r.at }),
		column(rows, func(r planRow) int64 { return r.pos })}
}

// stampColumns are the unnest arrays of stamp rows: ids, times, positions.
func stampColumns(rows []stampRow) []any {
	return []any{column(rows, func(r stampRow) uuid.UUID { return r.id }),
		column(rows, func(r stampRow) time.Time { return r.at }), column(rows, func(r stampRow) int64 { return r.pos })}
}
