package parcels

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
)

// bulkFill is what a load's publishing knows of the tables it fills: which
// of them were empty at its start, and the secondary indexes it dropped
// from those (their definitions, to build them again after the fill). A
// table empty at the start takes a plain INSERT (nothing can conflict)
// and its indexes, its primary key's too, are built once over the filled
// table (a sort each)
// rather than maintained row by row: the first load of a county of a
// million parcels. All of it happens in the load's transaction, so a
// failure rolls the drop back with the fill and nobody sees a table
// without its indexes but the transaction itself (a reader of the empty
// table waits for the commit, the drop's lock).
type bulkFill struct {
	empty   map[string]bool
	indexes []string
}

// indexesSQL lists a table's indexes ($1) as the statements that drop
// them and those that build them again: the primary key's (a constraint,
// which nothing references) first, then the secondary indexes.
const indexesSQL = `
SELECT format('ALTER TABLE %s DROP CONSTRAINT %I', k.conrelid::regclass, k.conname),
    format('ALTER TABLE %s ADD CONSTRAINT %I %s', k.conrelid::regclass, k.conname, pg_get_constraintdef(k.oid))
FROM pg_constraint k WHERE k.conrelid = $1::regclass AND k.contype = 'p'
UNION ALL
SELECT * FROM (
    SELECT format('DROP INDEX %s', i.indexrelid::regclass), pg_get_indexdef(i.indexrelid)
    FROM pg_index i
    WHERE i.indrelid = $1::regclass AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid)
    ORDER BY i.indexrelid::regclass::text) s`

// startBulkFill finds which of the load's tables are empty and drops the
// indexes of those: their primary keys (nothing conflicts with a row
// inserted into an empty table, the load's rows having one per key) and
// secondary indexes.
func startBulkFill(ctx context.Context, tx pgx.Tx) (bulkFill, error) {
	f := bulkFill{empty: map[string]bool{}}
	for _, t := range []string{"parcels", "parcel_layers"} {
		var empty bool
		if err := tx.QueryRow(ctx, `SELECT NOT EXISTS (SELECT 1 FROM `+t+`)`).Scan(&empty); err != nil {
			return f, fmt.Errorf("is %s empty: %w", t, err)
		}
		if !empty {
			continue
		}
		f.empty[t] = true
		rows, err := tx.Query(ctx, indexesSQL, t)
		if err != nil {
			return f, fmt.Errorf("%s's indexes: %w", t, err)
		}
		var drops, defs []string
		var drop, def string
		if _, err := pgx.ForEachRow(rows, []any{&drop, &def}, func() error {
			drops, defs = append(drops, drop), append(defs, def)
			return nil
		}); err != nil {
			return f, fmt.Errorf("%s's indexes: %w", t, err)
		}
		for i, drop := range drops {
			if _, err := tx.Exec(ctx, drop); err != nil {
				return f, fmt.Errorf("%s: %w", drop, err)
			}
			f.indexes = append(f.indexes, defs[i])
		}
	}
	return f, nil
}

// finish builds the dropped indexes again, with the memory and the
// parallel workers a bulk build wants, for this transaction only.
func (f bulkFill) finish(ctx context.Context, tx pgx.Tx, log *slog.Logger) error {
	if len(f.indexes) == 0 {
		return nil
	}
	if _, err := tx.Exec(ctx, `SELECT set_config('maintenance_work_mem', '256MB', true), set_config('max_parallel_maintenance_workers', '2', true)`); err != nil {
		return fmt.Errorf("index build settings: %w", err)
	}
	for _, def := range f.indexes {
		start := time.Now()
		if _, err := tx.Exec(ctx, def); err != nil {
			return fmt.Errorf("building the index %q again: %w", def, err)
		}
		log.Debug("parcels load step", "step", "index build", "index", def, "seconds", time.Since(start).Seconds())
	}
	return nil
}
