package projections_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/projections"
)

// ticks records the i of every Ticked event in a table whose CHECK
// constraint refuses 13: a real PostgreSQL error (23514) on exactly one
// event, which a test switches off by dropping the constraint.
type ticks struct{ closed bool }

func (t ticks) Spec() projections.Spec {
	name := "ticks"
	if t.closed {
		name = "ticks_closed"
	}
	return projections.Spec{Name: name, DDL: `CREATE TABLE ticks (i int PRIMARY KEY, CONSTRAINT no_thirteen CHECK (i <> 13));`, AllEvents: t.Apply}
}
func (ticks) Apply(ctx context.Context, tx pgx.Tx, events []projections.Event) error {
	for _, e := range events {
		var v struct{ I int }
		if err := json.Unmarshal(e.Data, &v); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO ticks (i) VALUES ($1)`, v.I); err != nil {
			return fmt.Errorf("inserting tick: %w", err)
		}
	}
	return nil
}

// closedTicks is ticks failing closed.
type closedTicks struct{ ticks }

func (c closedTicks) Spec() projections.Spec {
	s := c.ticks.Spec()
	s.FailClosedChannel = "arr_test_ticks"
	return s
}

func ticked(t *testing.T, pool *pgxpool.Pool, schema string) []int {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT i FROM `+pgx.Identifier{schema, "ticks"}.Sanitize()+` ORDER BY i`)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func checkpoint(t *testing.T, pool *pgxpool.Pool, name string) uint64 {
	t.Helper()
	var pos int64
	if err := pool.QueryRow(context.Background(), `SELECT position FROM projection_checkpoints WHERE name = $1`, name).Scan(&pos); err != nil {
		t.Fatal(err)
	}
	return uint64(pos)
}

// faultCurrent reports whether name has a fault at or past its checkpoint.
func faultCurrent(t *testing.T, pool *pgxpool.Pool, name string) bool {
	t.Helper()
	var ok bool
	if err := pool.QueryRow(context.Background(), `SELECT EXISTS (SELECT 1 FROM projection_faults f JOIN projection_checkpoints c ON c.name = f.projection
		WHERE f.projection = $1 AND c.position <= f.position)`, name).Scan(&ok); err != nil {
		t.Fatal(err)
	}
	return ok
}

func TestPoisonEventIsParkedAndRetried(t *testing.T) {
	pool, st, r := setup(t, ticks{})
	ctx := context.Background()
	head := appendN(t, st, "tick-1", 20) // i = 0..19; 13 cannot be applied

	// The first tries fail as a whole and are recorded as a fault.
	for try := 1; try <= 3; try++ {
		if _, _, err := r.Step(ctx, "ticks"); err == nil {
			t.Fatalf("try %d: Step applied a batch holding the poison event", try)
		}
		if !faultCurrent(t, pool, "ticks") {
			t.Fatalf("try %d: no current fault recorded", try)
		}
	}
	// The next try applies event by event and parks the poison event.
	pos, n, err := r.Step(ctx, "ticks")
	if err != nil {
		t.Fatalf("Step after the retries: %v", err)
	}
	if pos != head || n != 20 {
		t.Fatalf("Step = %d, %d events; want the checkpoint at the head %d", pos, n, head)
	}
	if got := ticked(t, pool, "rm_ticks"); len(got) != 19 {
		t.Fatalf("read model holds %d ticks, want the 19 that apply", len(got))
	}
	if faultCurrent(t, pool, "ticks") {
		t.Fatalf("the fault is still current after the projection moved past it")
	}
	parked := parkedOf(t, pool, "ticks")
	if len(parked) != 1 || parked[0].Position != 14 || parked[0].EventType != "Ticked" {
		t.Fatalf("parked = %+v, want the event at position 14 (i = 13)", parked)
	}

	// A retry while the cause persists keeps the event parked.
	res, err := r.RetryParked(ctx, "ticks", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Applied != 0 || res.StillParked != 1 || len(res.Failing) != 1 || res.Failing[0].Attempts != 2 || res.Failing[0].Position != 14 {
		t.Fatalf("retry with the cause in place = %+v, want it still parked after 2 attempts", res)
	}

	// A rebuild re-applies every event in order and parks the poison one again.
	if err := r.Rebuild(ctx, "ticks", nil); err != nil {
		t.Fatalf("Rebuild: %v", err)
	}
	if got := ticked(t, pool, "rm_ticks"); len(got) != 19 {
		t.Fatalf("after a rebuild the read model holds %d ticks, want 19", len(got))
	}
	if parked := parkedOf(t, pool, "ticks"); len(parked) != 1 || parked[0].Position != 14 {
		t.Fatalf("after a rebuild parked = %+v, want position 14 only", parked)
	}

	// The failure switched off, a retry applies it and the list empties.
	if _, err := pool.Exec(ctx, `ALTER TABLE rm_ticks.ticks DROP CONSTRAINT no_thirteen`); err != nil {
		t.Fatal(err)
	}
	res, err = r.RetryParked(ctx, "ticks", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Applied != 1 || res.StillParked != 0 || len(res.Failing) != 0 {
		t.Fatalf("retry = %+v, want position 14 applied", res)
	}
	if got := ticked(t, pool, "rm_ticks"); len(got) != 20 {
		t.Fatalf("after the retry the read model holds %d ticks, want 20", len(got))
	}
	if parked := parkedOf(t, pool, "ticks"); len(parked) != 0 {
		t.Fatalf("parked after a successful retry = %+v", parked)
	}
}

func TestFailClosedProjectionNeverParks(t *testing.T) {
	pool, st, r := setup(t, closedTicks{ticks{closed: true}})
	ctx := context.Background()
	appendN(t, st, "tick-1", 20)
	for try := 1; try <= 8; try++ {
		if _, _, err := r.Step(ctx, "ticks_closed"); err == nil {
			t.Fatalf("try %d: a projection that fails closed got past its poison event", try)
		}
	}
	if pos := checkpoint(t, pool, "ticks_closed"); pos != 0 {
		t.Fatalf("checkpoint = %d, want 0: nothing skipped", pos)
	}
	if !faultCurrent(t, pool, "ticks_closed") {
		t.Fatalf("no current fault for a failing projection that fails closed")
	}
	if parked := parkedOf(t, pool, ""); len(parked) != 0 {
		t.Fatalf("a projection that fails closed parked %+v", parked)
	}
	// A rebuild of it fails rather than skip the event.
	if err := r.Rebuild(ctx, "ticks_closed", nil); err == nil {
		t.Fatalf("rebuilding a projection that fails closed skipped its poison event")
	}
	// Fixed, it applies everything and the fault is no longer current.
	if _, err := pool.Exec(ctx, `ALTER TABLE rm_ticks_closed.ticks DROP CONSTRAINT no_thirteen`); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := r.WaitFor(wctx, "ticks_closed", 20); err != nil {
		t.Fatal(err)
	}
	if got := ticked(t, pool, "rm_ticks_closed"); len(got) != 20 {
		t.Fatalf("read model holds %d ticks, want 20", len(got))
	}
	if faultCurrent(t, pool, "ticks_closed") {
		t.Fatalf("fault still current after the projection advanced")
	}
}

func TestTransient(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"deadline", fmt.Errorf("x: %w", context.DeadlineExceeded), true},
		{"cancelled", context.Canceled, true},
		{"EOF", io.ErrUnexpectedEOF, true},
		{"network", &net.OpError{Op: "read", Err: errors.New("connection reset")}, true},
		{"connection exception", &pgconn.PgError{Code: "08006"}, true},
		{"serialization failure", &pgconn.PgError{Code: "40001"}, true},
		{"deadlock", &pgconn.PgError{Code: "40P01"}, true},
		{"admin shutdown", &pgconn.PgError{Code: "57P01"}, true},
		{"statement timeout", &pgconn.PgError{Code: "57014"}, true},
		{"too many connections", &pgconn.PgError{Code: "53300"}, true},
		{"lock not available", &pgconn.PgError{Code: "55P03"}, true},
		{"NUL in text", &pgconn.PgError{Code: "22021"}, false},
		{"unsupported unicode escape", &pgconn.PgError{Code: "22P05"}, false},
		{"check violation", fmt.Errorf("inserting: %w", &pgconn.PgError{Code: "23514"}), false},
		{"undefined column", &pgconn.PgError{Code: "42703"}, false},
		{"raised by a trigger", &pgconn.PgError{Code: "P0001"}, false},
		{"payload that does not decode", &json.SyntaxError{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := projections.Transient(tc.err); got != tc.want {
				t.Fatalf("Transient(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}
