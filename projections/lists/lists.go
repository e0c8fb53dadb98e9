package lists

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/arr-dev/arr/domain/records"
	"github.com/arr-dev/arr/projections"
)

// Projection is the read model of the lists accounts imported into the records
// service. Contact columns stay sealed with the account's data key (the
// read model never holds them in clear); when an account's contact data is
// erased, its sealed columns are dropped here too.
type Projection struct{}

// Name is the lists projection's name and checkpoint key.
const Name = "lists"

// ddl is the read model's tables.
const ddl = `
CREATE TABLE lists (
    list_id     uuid        PRIMARY KEY,
    account_id  uuid        NOT NULL,
    name        text        NOT NULL,
    rows        integer     NOT NULL,
    columns     text[]      NOT NULL,
    imported_at timestamptz NOT NULL,
    position    bigint      NOT NULL
);
CREATE TABLE list_rows (
    list_id      uuid    NOT NULL,
    row_no       integer NOT NULL,
    lead_id      uuid    NOT NULL,
    account_id   uuid    NOT NULL,
    apn          text    COLLATE "C" NOT NULL,
    apn_norm     text    COLLATE "C" NOT NULL,
    county       text    COLLATE "C" NOT NULL,
    address      text    NOT NULL,
    unit         text    NOT NULL,
    city         text    NOT NULL,
    state        text    NOT NULL,
    zip          text    NOT NULL,
    no_property  boolean NOT NULL,
    within       text    COLLATE "C" NOT NULL,
    street_key   text    COLLATE "C" NOT NULL,
    unit_key     text    COLLATE "C" NOT NULL,
    unit_conflict boolean NOT NULL,
    contact      bytea,
    contact_erased boolean NOT NULL DEFAULT false,
    position     bigint  NOT NULL,
    PRIMARY KEY (list_id, row_no)
);
CREATE TABLE erasures (
    account_id uuid        PRIMARY KEY,
    erased_at  timestamptz NOT NULL,
    position   bigint      NOT NULL
);
`

// deferredDDL is the read model's secondary indexes.
const deferredDDL = `
CREATE INDEX lists_account ON lists (account_id, imported_at DESC);
CREATE UNIQUE INDEX list_rows_lead ON list_rows (lead_id);
CREATE INDEX list_rows_account ON list_rows (account_id);
`

// Spec implements projections.Projection.
func (Projection) Spec() projections.Spec {
	return projections.Spec{Name: Name, DDL: ddl + keyRules(), DeferredDDL: deferredDDL, Batch: newBatch}
}

// newBatch begins a batch: its lists' rows are copied in at once, before
// an erasure and at the end.
func newBatch() projections.Batch {
	type row struct {
		list, account uuid.UUID
		records.ListRow
		pos int64
	}
	var rows []row
	flush := func(ctx context.Context, tx pgx.Tx) error {
		if len(rows) == 0 {
			return nil
		}
		_, err := tx.CopyFrom(ctx, pgx.Identifier{"list_rows"},
			[]string{"list_id", "row_no", "lead_id", "account_id", "apn", "apn_norm", "county", "address", "unit", "city", "state", "zip",
				"no_property", "within", "street_key", "unit_key", "unit_conflict", "contact", "position"},
			pgx.CopyFromSlice(len(rows), func(i int) ([]any, error) {
				r := rows[i]
				k := r.MatchKeys()
				return []any{r.list, int32(r.Row), r.LeadID, r.account, r.APN, k.APN, r.County, r.Address, r.Unit, r.City, r.State, r.Zip,
					r.NoProperty, k.Within, k.Street, k.Unit, k.UnitConflict, r.Contact, r.pos}, nil
			}))
		rows = rows[:0]
		if err != nil {
			return fmt.Errorf("inserting list rows: %w", err)
		}
		return nil
	}
	imported := func(ctx context.Context, tx pgx.Tx, e projections.Event, v *records.ListImported) error {
		if _, err := tx.Exec(ctx, `INSERT INTO lists (list_id, account_id, name, rows, columns, imported_at, position) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
			v.ListID, v.AccountID, v.Name, v.Rows, v.Columns, v.ImportedAt, int64(e.Position)); err != nil {
			return fmt.Errorf("event %d: %w", e.Position, err)
		}
		return nil
	}
	rowsImported := func(_ context.Context, _ pgx.Tx, e projections.Event, v *records.ListRowsImported) error {
		for _, r := range v.Rows {
			rows = append(rows, row{list: v.ListID, account: v.AccountID, ListRow: r, pos: int64(e.Position)})
		}
		return nil
	}
	erased := func(ctx context.Context, tx pgx.Tx, e projections.Event, v *records.ContactDataErased) error {
		if err := flush(ctx, tx); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE list_rows SET contact = NULL, contact_erased = true, position = $2
				WHERE account_id = $1 AND (contact IS NOT NULL OR NOT contact_erased)`, v.AccountID, int64(e.Position)); err != nil {
			return fmt.Errorf("event %d: %w", e.Position, err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO erasures (account_id, erased_at, position) VALUES ($1, $2, $3)
				ON CONFLICT (account_id) DO UPDATE SET erased_at = excluded.erased_at, position = excluded.position`,
			v.AccountID, v.ErasedAt, int64(e.Position)); err != nil {
			return fmt.Errorf("event %d: %w", e.Position, err)
		}
		return nil
	}
	return projections.Batch{Handlers: []projections.Handler{projections.On(imported), projections.On(rowsImported), projections.On(erased)}, Flush: flush}
}

// keyRules names, in the DDL, the rules that made the keys the read model
// stores (records.KeyRules): a change of them changes the DDL's hash, and
// the runner rebuilds the read model with keys made by the new rules.
func keyRules() string { return "\n-- match keys made by rules " + records.KeyRules() + "\n" }
