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
// and its indexes are built once over the filled table (a sort each)
// rather than maintained row by row: the first load of a county of a
// million parcels. All of it happens in the load's transaction, so a
// failure rolls the drop back with the fill and nobody sees a table
// without its indexes but the transaction itself (a reader of the empty
// table waits for the commit, the drop's lock).
type bulkFill struct {
	empty   map[string]bool
	indexes []string
}

// startBulkFill finds which of the load's tables are empty and drops the
// secondary indexes (those backing no constraint) of those.
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
		rows, err := tx.Query(ctx, `SELECT format('%I.%I', n.nspname, c.relname), pg_get_indexdef(i.indexrelid)
			FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace
			WHERE i.indrelid = $1::regclass AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid)
			ORDER BY c.relname`, t)
		if err != nil {
			return f, fmt.Errorf("%s's indexes: %w", t, err)
		}
		var names, defs []string
		var name, def string
		if _, err := pgx.ForEachRow(rows, []any{&name, &def}, func() error {
			names, defs = append(names, name), append(defs, def)
			return nil
		}); err != nil {
			return f, fmt.Errorf("%s's indexes: %w", t, err)
		}
		for i, name := range names {
			if _, err := tx.Exec(ctx, `DROP INDEX `+name); err != nil {
				return f, fmt.Errorf("dropping %s: %w", name, err)
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
