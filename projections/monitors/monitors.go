package monitors

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/arr-dev/arr/domain/records"
	"github.com/arr-dev/arr/projections"
)

// Projection builds rm_monitors.monitors.
type Projection struct{}

// Name is the projection's name and checkpoint key.
const Name = "monitors"

// ddl is the read model's tables.
const ddl = `
CREATE TABLE monitors (
    monitor_id uuid        PRIMARY KEY,
    account_id uuid        NOT NULL,
    list_id    uuid        NOT NULL,
    url        text        NOT NULL,
    layers     text[]      NOT NULL,
    created_at timestamptz NOT NULL,
    deleted_at timestamptz,
    disabled_at timestamptz,
    disabled_reason text,
    position   bigint      NOT NULL
);
`

// deferredDDL is the read model's secondary indexes.
const deferredDDL = `CREATE INDEX monitors_account ON monitors (account_id, created_at, monitor_id);`

// Spec implements projections.Projection.
func (Projection) Spec() projections.Spec {
	return projections.Spec{Name: Name, DDL: ddl, DeferredDDL: deferredDDL, Handlers: []projections.Handler{
		projections.On(created), projections.On(deleted), projections.On(disabled), projections.On(erased),
	}}
}

func created(ctx context.Context, tx pgx.Tx, e projections.Event, v *records.MonitorCreated) error {
	_, err := tx.Exec(ctx, `INSERT INTO monitors (monitor_id, account_id, list_id, url, layers, created_at, position)
				VALUES ($1, $2, $3, $4, $5, $6, $7)`, v.MonitorID, v.AccountID, v.ListID, v.URL, v.Layers, v.CreatedAt, int64(e.Position))
	return eventError(e, err)
}

func deleted(ctx context.Context, tx pgx.Tx, e projections.Event, v *records.MonitorDeleted) error {
	_, err := tx.Exec(ctx, `UPDATE monitors SET deleted_at = $2, position = $3 WHERE monitor_id = $1 AND deleted_at IS NULL`,
		v.MonitorID, v.DeletedAt, int64(e.Position))
	return eventError(e, err)
}

func disabled(ctx context.Context, tx pgx.Tx, e projections.Event, v *records.MonitorDisabled) error {
	_, err := tx.Exec(ctx, `UPDATE monitors SET disabled_at = $2, disabled_reason = $3, position = $4
				WHERE monitor_id = $1 AND deleted_at IS NULL AND disabled_at IS NULL`, v.MonitorID, v.DisabledAt, v.Reason, int64(e.Position))
	return eventError(e, err)
}

func erased(ctx context.Context, tx pgx.Tx, e projections.Event, v *records.ContactDataErased) error {
	_, err := tx.Exec(ctx, `UPDATE monitors SET disabled_at = $2, disabled_reason = $3, position = $4
				WHERE account_id = $1 AND deleted_at IS NULL AND disabled_at IS NULL`, v.AccountID, v.ErasedAt, ErasedReason, int64(e.Position))
	return eventError(e, err)
}

// eventError names e's position in err, if there is one.
func eventError(e projections.Event, err error) error {
	if err != nil {
		return fmt.Errorf("event %d: %w", e.Position, err)
	}
	return nil
}

// The statuses of a monitor.
const (
	StatusActive   = "active"
	StatusDisabled = "disabled"
	StatusDeleted  = "deleted"
)

// statusSQL renders a monitors row's status.
const statusSQL = `CASE WHEN deleted_at IS NOT NULL THEN '` + StatusDeleted + `' WHEN disabled_at IS NOT NULL THEN '` + StatusDisabled + `' ELSE '` + StatusActive + `' END`

// ErasedReason is a monitor's disabled reason when its account's contact
// data was erased: the data key that sealed its secret is gone.
const ErasedReason = "the account's contact data was erased, with the key that sealed this monitor's secret; create a new monitor"

// Monitor is one monitor as its account sees it (never its secret).
// Status is active, disabled (by arr: its webhook failed too long, or its
// secret was erased) or deleted (by its account).
type Monitor struct {
	MonitorID      uuid.UUID  `json:"monitor_id"`
	ListID         uuid.UUID  `json:"list_id"`
	URL            string     `json:"url"`
	Layers         []string   `json:"layers"`
	Status         string     `json:"status"`
	CreatedAt      time.Time  `json:"created_at"`
	DeletedAt      *time.Time `json:"deleted_at"`
	DisabledAt     *time.Time `json:"disabled_at"`
	DisabledReason *string    `json:"disabled_reason"`
}

// Queries reads the monitors read model. Safe for concurrent use.
type Queries struct{ pool projections.DB }

// NewQueries returns the queries over the monitors read model.
func NewQueries(pool projections.DB) *Queries { return &Queries{pool: pool} }

// List returns an account's monitors, oldest first, limit from offset,
// deleted ones too when withDeleted; and how many there are.
func (q *Queries) List(ctx context.Context, account uuid.UUID, withDeleted bool, limit, offset int) ([]Monitor, int, error) {
	const where = `FROM rm_monitors.monitors WHERE account_id = $1 AND ($2 OR deleted_at IS NULL)`
	var total int
	if err := q.pool.QueryRow(ctx, `SELECT count(*) `+where, account, withDeleted).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("counting monitors: %w", err)
	}
	rows, err := q.pool.Query(ctx, `SELECT monitor_id, list_id, url, layers, `+statusSQL+`,
		created_at, deleted_at, disabled_at, disabled_reason `+where+`
		ORDER BY created_at, monitor_id LIMIT $3 OFFSET $4`, account, withDeleted, limit, offset)
	if err != nil {
		return nil, 0, fmt.Errorf("listing monitors: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByPos[Monitor])
	if err != nil {
		return nil, 0, fmt.Errorf("listing monitors: %w", err)
	}
	if out == nil {
		out = []Monitor{}
	}
	return out, total, nil
}

// Get returns one of an account's monitors; false when the account has no
// such monitor (another account's reads as missing).
func (q *Queries) Get(ctx context.Context, account, id uuid.UUID) (Monitor, bool, error) {
	rows, err := q.pool.Query(ctx, `SELECT monitor_id, list_id, url, layers, `+statusSQL+`,
		created_at, deleted_at, disabled_at, disabled_reason FROM rm_monitors.monitors WHERE account_id = $1 AND monitor_id = $2`, account, id)
	if err != nil {
		return Monitor{}, false, fmt.Errorf("loading monitor %s: %w", id, err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByPos[Monitor])
	if err != nil {
		return Monitor{}, false, fmt.Errorf("loading monitor %s: %w", id, err)
	}
	if len(out) == 0 {
		return Monitor{}, false, nil
	}
	return out[0], true, nil
}
