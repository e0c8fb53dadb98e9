package commands_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/eventstore/postgres"
	"github.com/arr-dev/arr/migrations/migratetest"
	"github.com/arr-dev/arr/projections/sqlproj"
)

const tally = "-- arr:projection tally\nCREATE TABLE n (c bigint);\n-- arr:on KeyIssued\nINSERT INTO n VALUES (1);\n"

// TestDefineAndDropSQLProjection: a definition that passes the checks is
// recorded once, whoever races to record it; one that fails them, or takes
// a built-in's name, records nothing; only a defined projection drops.
func TestDefineAndDropSQLProjection(t *testing.T) {
	ctx := context.Background()
	pool, _ := migratetest.NewPool(t)
	st, err := postgres.New(pool, postgres.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	e, err := sqlproj.Open(ctx, pool, sqlproj.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	now := func() time.Time { return time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC) }
	define, err := commands.NewDefineSQLProjectionHandler(st, e, func(n string) bool { return n == "identity" }, now)
	if err != nil {
		t.Fatal(err)
	}
	drop, err := commands.NewDropSQLProjectionHandler(st, now)
	if err != nil {
		t.Fatal(err)
	}
	recorded := func() int64 {
		var n int64
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM events WHERE event_type LIKE 'SQLProjection%'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	for _, tc := range []struct{ name, src, want string }{
		{"bad SQL", "-- arr:projection bad\nCREATE TABLE n (c bigint);\n-- arr:on KeyIssued\nINSERT INTO n VALUES ('x');\n", "invalid input syntax for type bigint"},
		{"a built-in's name", "-- arr:projection identity\nCREATE TABLE n (c bigint);\n-- arr:on KeyIssued\nINSERT INTO n VALUES (1);\n", "projection_exists"},
		{"no name", "CREATE TABLE n (c bigint);\n", "must start with a line -- arr:projection NAME"},
	} {
		if _, _, err := define.Handle(ctx, commands.DefineSQLProjection{File: "f.sql", SQL: tc.src, DefinedBy: "ann"}); err == nil || !contains(err, tc.want) {
			t.Fatalf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	if n := recorded(); n != 0 {
		t.Fatalf("refused definitions recorded %d events", n)
	}

	var wg sync.WaitGroup
	var mu sync.Mutex
	won, lost := 0, 0
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, err := define.Handle(ctx, commands.DefineSQLProjection{File: "tally.sql", SQL: tally, DefinedBy: "ann"})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				won++
			case errors.Is(err, domain.ErrConflict) || errors.Is(err, domain.ErrConcurrency):
				lost++
			default:
				t.Errorf("define: %v", err)
			}
		}()
	}
	wg.Wait()
	if won != 1 || lost != 3 || recorded() != 1 {
		t.Fatalf("%d definitions won, %d lost, %d recorded; want 1, 3, 1", won, lost, recorded())
	}
	if _, err := drop.Handle(ctx, commands.DropSQLProjection{Name: "other", DroppedBy: "ann"}); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("dropping an undefined projection: %v", err)
	}
	if _, err := drop.Handle(ctx, commands.DropSQLProjection{Name: "tally", DroppedBy: "bob"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := define.Handle(ctx, commands.DefineSQLProjection{File: "tally.sql", SQL: tally, DefinedBy: "ann"}); err != nil {
		t.Fatalf("defining again after the drop: %v", err)
	}
	var by string
	if err := pool.QueryRow(ctx, `SELECT string_agg(event_type || ':' || coalesce(data->>'defined_by', data->>'dropped_by'), ',' ORDER BY position) FROM events`).Scan(&by); err != nil {
		t.Fatal(err)
	}
	if by != "SQLProjectionDefined:ann,SQLProjectionDropped:bob,SQLProjectionDefined:ann" {
		t.Fatalf("history %s", by)
	}
	// The checks left no role behind (the scratch roles are rolled back).
	var roles int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_roles WHERE rolname LIKE 'arrsql\_check\_%'`).Scan(&roles); err != nil || roles != 0 {
		t.Fatalf("%d scratch roles left (%v)", roles, err)
	}
}

func contains(err error, s string) bool { return err != nil && strings.Contains(err.Error(), s) }
