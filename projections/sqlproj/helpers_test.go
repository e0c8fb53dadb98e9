package sqlproj_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/analysis"
	"github.com/arr-dev/arr/domain/audit"
	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/eventstore/postgres"
	"github.com/arr-dev/arr/migrations/migratetest"
	"github.com/arr-dev/arr/projections"
	"github.com/arr-dev/arr/projections/sqlproj"
)

// harness is a fresh database with a store, a runner holding the
// definitions read model, and an engine.
type harness struct {
	pool   *pgxpool.Pool
	store  eventstore.Store
	runner *projections.Runner
	engine *sqlproj.Engine
}

func newHarness(t testing.TB, cfg sqlproj.Config) *harness {
	t.Helper()
	pool, _ := migratetest.NewPool(t)
	st, err := postgres.New(pool, postgres.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	r, err := projections.NewRunner(pool, st, projections.Config{BatchSize: 50, RebuildBatchSize: 70, ParkAfter: 1}, sqlproj.Definitions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := r.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	e, err := sqlproj.Open(ctx, pool, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	h := &harness{pool: pool, store: st, runner: r, engine: e}
	t.Cleanup(func() { h.dropRoles(t) })
	return h
}

// dropRoles drops the test database's projection roles: roles belong to
// the server and would outlive the database.
func (h *harness) dropRoles(t testing.TB) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rows, err := h.pool.Query(ctx, `SELECT rolname FROM pg_roles WHERE rolname LIKE $1`,
		fmt.Sprintf("arrsql\\_%s\\_%%", dbOID(t, h.pool)))
	if err != nil {
		t.Log(err)
		return
	}
	roles, _ := pgx.CollectRows(rows, pgx.RowTo[string])
	for _, r := range roles {
		id := pgx.Identifier{r}.Sanitize()
		if _, err := h.pool.Exec(ctx, `DROP OWNED BY `+id+`; DROP ROLE `+id); err != nil {
			t.Logf("dropping role %s: %v", r, err)
		}
	}
}

func dbOID(t testing.TB, pool *pgxpool.Pool) string {
	var oid uint32
	if err := pool.QueryRow(context.Background(), `SELECT oid FROM pg_database WHERE datname = current_database()`).Scan(&oid); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(oid)
}

// define checks src and records it as defined, then syncs the runner
// (which sets the projection up and builds it from the log).
func (h *harness) define(t testing.TB, src string) projections.Spec {
	t.Helper()
	ctx := context.Background()
	d, err := h.engine.Parse("test.sql", src)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.engine.Check(ctx, d); err != nil {
		t.Fatal(err)
	}
	pos := h.appendEvent(t, analysis.StreamID(d.Name), &analysis.SQLProjectionDefined{Name: d.Name, SQL: src, DefinedBy: "test", DefinedAt: time.Now()})
	h.waitFor(t, sqlproj.DefinitionsName, pos)
	if _, err := h.engine.Sync(ctx, h.runner, true); err != nil {
		t.Fatal(err)
	}
	p, err := h.runner.Get(d.Name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func (h *harness) appendEvent(t testing.TB, stream string, e domain.Event) uint64 {
	t.Helper()
	ne, err := eventstore.Encode(e, eventstore.Metadata{Actor: "test"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := h.store.Append(context.Background(), stream, eventstore.Any(), ne)
	if err != nil {
		t.Fatal(err)
	}
	return res.LastPosition
}

// completion appends a CompletionRecorded whose payload is a completion of
// model costing cost micro-dollars.
func (h *harness) completion(t testing.TB, model string, cost int64) uint64 {
	t.Helper()
	payload, _ := json.Marshal(audit.Completion{AccountID: uuid.New(), Model: model, CostMicroUSD: cost, Outcome: "ok", StartedAt: time.Now().UTC()})
	return h.appendEvent(t, "audit", &audit.CompletionRecorded{Seq: 1, PrevHash: "a", Hash: "b", Payload: payload, Link: audit.LinkV2})
}

// probe appends a CompletionRecorded whose payload is {"q": q}.
func (h *harness) probe(t testing.TB, q string) uint64 {
	t.Helper()
	payload, _ := json.Marshal(map[string]string{"q": q})
	return h.appendEvent(t, "probe", &audit.CompletionRecorded{Payload: payload, Link: audit.LinkV2})
}

func (h *harness) waitFor(t testing.TB, name string, pos uint64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := h.runner.WaitFor(ctx, name, pos); err != nil {
		t.Fatal(err)
	}
}

func (h *harness) query(t testing.TB, name, sql string) *sqlproj.Result {
	t.Helper()
	res, err := h.engine.Query(context.Background(), name, sql)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func spendSQL(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile("testdata/spend_by_model.sql")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// droppedAndRead defines the spend projection, builds it, drops its
// definition (Sync forgets it, so Engine.Drop may drop it) and returns it
// with a transaction, rolled back at the test's end, holding its spend
// table as a reader does: the role's DROP SCHEMA waits for it.
func (h *harness) droppedAndRead(t testing.TB) (projections.Spec, pgx.Tx) {
	t.Helper()
	ctx := context.Background()
	p := h.define(t, spendSQL(t))
	h.waitFor(t, p.Name, h.completion(t, "a", 1))
	pos := h.appendEvent(t, analysis.StreamID(p.Name), &analysis.SQLProjectionDropped{Name: p.Name, DroppedBy: "test", DroppedAt: time.Now()})
	h.waitFor(t, sqlproj.DefinitionsName, pos)
	if _, err := h.engine.Sync(ctx, h.runner, true); err != nil {
		t.Fatal(err)
	}
	reader, err := h.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reader.Rollback(ctx) }) //nolint:errcheck
	if _, err := reader.Exec(ctx, `LOCK TABLE `+projections.Schema(p.Name)+`.spend IN ACCESS SHARE MODE`); err != nil {
		t.Fatal(err)
	}
	return p, reader
}
