package sqlproj_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain/analysis"
	"github.com/arr-dev/arr/domain/audit"
	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/projections"
	"github.com/arr-dev/arr/projections/sqlproj"
)

// TestSpendByModel: the projection, defined on a log that already
// holds completions, is built from it, then kept up to date; a rebuild
// yields the same rows.
func TestSpendByModel(t *testing.T) {
	h := newHarness(t, sqlproj.Config{})
	for i := range 120 {
		h.completion(t, []string{"small-1", "mid-1"}[i%2], int64(10+i%3))
	}
	p := h.define(t, spendSQL(t))
	head := h.completion(t, "small-1", 1000)
	h.waitFor(t, p.Name, head)
	want := [][]string{{"mid-1", "660", "60"}, {"small-1", "1660", "61"}}
	check := func(when string) {
		t.Helper()
		res := h.query(t, "spend_by_model", "SELECT model, cost_micro, n FROM spend ORDER BY model;")
		if len(res.Columns) != 3 || res.Columns[0] != "model" || len(res.Rows) != 2 {
			t.Fatalf("%s: got %v %v", when, res.Columns, res.Rows)
		}
		for i, row := range res.Rows {
			for j, v := range row {
				if sqlproj.Text(v) != want[i][j] {
					t.Fatalf("%s: row %d = %s, want %v", when, i, row, want[i])
				}
			}
		}
	}
	check("live")
	if err := h.runner.Rebuild(context.Background(), p.Name, nil); err != nil {
		t.Fatal(err)
	}
	check("after a rebuild")
}

// TestSeesTheCurrentSchemaVersion: an event recorded at an older schema
// version reaches the SQL upcast: :data is the current version's JSON and
// :schema_version says which.
func TestSeesTheCurrentSchemaVersion(t *testing.T) {
	h := newHarness(t, sqlproj.Config{})
	// A version 1 CompletionRecorded: no "link" field.
	res, err := h.store.Append(context.Background(), "audit", eventstore.Any(), eventstore.NewEvent{ID: uuid.New(), Type: "CompletionRecorded", SchemaVersion: 1,
		Data: []byte(`{"seq":1,"prev_hash":"a","hash":"b","payload":{"model":"old"}}`)})
	if err != nil {
		t.Fatal(err)
	}
	p := h.define(t, `-- arr:projection versions
CREATE TABLE seen (position bigint, schema_version int, link int, model text, stream text, version bigint, actor text, recorded_at timestamptz);
-- arr:on CompletionRecorded
INSERT INTO seen VALUES (:position, :schema_version, (:data->>'link')::int, :data->'payload'->>'model', :stream, :version, :metadata->>'actor', :recorded_at);
`)
	h.waitFor(t, p.Name, res.LastPosition)
	got := h.query(t, p.Name, "SELECT position, schema_version, link, model, stream, version FROM seen")
	want := []string{fmt.Sprint(res.LastPosition), "2", "1", "old", "audit", "0"}
	if len(got.Rows) != 1 {
		t.Fatalf("rows %v", got.Rows)
	}
	for i, v := range got.Rows[0] {
		if sqlproj.Text(v) != want[i] {
			t.Fatalf("seen %v, want %v", got.Rows[0], want)
		}
	}
}

// TestBatchSections: an arr:batch section runs once per batch over
// :events (only its types), after the arr:on sections have run event by
// event; the result does not depend on how the log is cut into batches.
func TestBatchSections(t *testing.T) {
	h := newHarness(t, sqlproj.Config{})
	for i := range 200 {
		h.completion(t, []string{"a", "b", "c"}[i%3], int64(i))
	}
	p := h.define(t, `-- arr:projection batched
CREATE TABLE spend (model text PRIMARY KEY, cost bigint NOT NULL, n bigint NOT NULL, last bigint NOT NULL);
CREATE TABLE batches (n bigint);
-- arr:on CompletionRecorded
INSERT INTO batches VALUES (1);
-- arr:batch CompletionRecorded
INSERT INTO spend
SELECT data->'payload'->>'model', sum((data->'payload'->>'cost_micro_usd')::bigint), count(*), max(position)
FROM :events GROUP BY 1
ON CONFLICT (model) DO UPDATE SET cost = spend.cost + EXCLUDED.cost, n = spend.n + EXCLUDED.n, last = greatest(spend.last, EXCLUDED.last);
-- arr:batch KeyIssued
DELETE FROM batches;
`)
	last := h.completion(t, "a", 1000)
	h.waitFor(t, p.Name, last)
	check := func(when string) {
		t.Helper()
		got := h.query(t, p.Name, "SELECT model, cost, n, (SELECT count(*) FROM batches) FROM spend ORDER BY model")
		want := [][]string{{"a", "7633", "68", "201"}, {"b", "6700", "67", "201"}, {"c", "6567", "66", "201"}}
		if len(got.Rows) != 3 {
			t.Fatalf("%s: %v", when, got.Rows)
		}
		for i, row := range got.Rows {
			for j, v := range row {
				if sqlproj.Text(v) != want[i][j] {
					t.Fatalf("%s: row %d %s, want %v", when, i, row, want[i])
				}
			}
		}
	}
	check("live")
	if err := h.runner.Rebuild(context.Background(), p.Name, nil); err != nil {
		t.Fatal(err)
	}
	check("rebuilt")
}

// TestDropAndDefineAgain: a drop removes the schemas, the checkpoint and
// the role; the runner forgets the projection; the name can be defined
// again with other SQL.
func TestDropAndDefineAgain(t *testing.T) {
	h := newHarness(t, sqlproj.Config{})
	ctx := context.Background()
	p := h.define(t, spendSQL(t))
	if dropped, err := h.engine.Drop(ctx, p.Name); err != nil || dropped {
		t.Fatalf("dropping a projection still defined: %v %v, want nothing dropped", dropped, err)
	}
	pos := h.appendEvent(t, analysis.StreamID(p.Name), &analysis.SQLProjectionDropped{Name: p.Name, DroppedBy: "test", DroppedAt: time.Now()})
	h.waitFor(t, sqlproj.DefinitionsName, pos)
	removed, err := h.engine.Sync(ctx, h.runner, true)
	if err != nil || len(removed) != 1 || removed[0] != p.Name {
		t.Fatalf("sync removed %v, %v", removed, err)
	}
	if dropped, err := h.engine.Drop(ctx, p.Name); err != nil || !dropped {
		t.Fatalf("drop: %v %v", dropped, err)
	}
	var left int
	if err := h.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'rm\_spend\_by\_model%')
		+ (SELECT count(*) FROM projection_checkpoints WHERE name = $1) + (SELECT count(*) FROM pg_roles WHERE rolname = $2)`,
		p.Name, h.engine.Role(p.Name)).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Fatalf("%d things left after the drop", left)
	}
	if _, err := h.runner.Get(p.Name); err == nil {
		t.Fatal("the runner still has the dropped projection")
	}
	again := h.define(t, "-- arr:projection spend_by_model\nCREATE TABLE n (c bigint);\n-- arr:on CompletionRecorded\nINSERT INTO n VALUES (1);")
	last := h.completion(t, "x", 1)
	h.waitFor(t, again.Name, last)
	if got := h.query(t, again.Name, "SELECT count(*) FROM n"); sqlproj.Text(got.Rows[0][0]) != "1" {
		t.Fatalf("the projection defined again counted %v", got.Rows)
	}
}

// TestChainsReadTheJSONAsJsonbDoes: a projection whose statements read
// chains of -> and ->> (found in the JSON by arr) builds the same rows as
// the same projection reading the whole jsonb, per event and per batch,
// on documents with spaces, repeated and escaped keys, missing paths,
// non-objects on the way, nulls and odd numbers.
func TestChainsReadTheJSONAsJsonbDoes(t *testing.T) {
	h := newHarness(t, sqlproj.Config{})
	docs := []string{
		`{"seq":1,"payload":{"model":"a","cost_micro_usd":5},"link":2}`,
		"{ \"seq\" : 2 ,\n \"payload\" : { \"model\" : \"b\" , \"cost_micro_usd\" : 1.50 } , \"link\" : 2 }",
		`{"payload":{"model":"x"},"payload":{"model":"c","model":"d","cost_micro_usd":1e2},"link":2}`,
		`{"payload":{"mod\u0065l":"e\"q\\u","cost_micro_usd":-0},"link":2}`,
		`{"payload":{"cost_micro_usd":null},"link":2}`,
		`{"payload":[1,{"model":"f"}],"link":2}`,
		`{"payload":"str","link":2}`,
		`{"payload":null,"link":2}`,
		`{"payload":{"model":{"b":1,"a":[true,false,null]},"cost_micro_usd":"7"},"link":2}`,
		`{"payload":{"model":"\u00e9t\u00e9 \u2603 ☃","cost_micro_usd":0},"seq":"s"}`,
	}
	version := (&audit.CompletionRecorded{}).SchemaVersion()
	var head uint64
	for _, doc := range docs {
		res, err := h.store.Append(context.Background(), "chains", eventstore.Any(), eventstore.NewEvent{ID: uuid.New(), Type: "CompletionRecorded",
			SchemaVersion: version, Data: []byte(doc), Metadata: eventstore.Metadata{Actor: "ann"}})
		if err != nil {
			t.Fatal(err)
		}
		head = res.LastPosition
	}
	const table = "CREATE TABLE r (position bigint PRIMARY KEY, model text, cost jsonb, seq text, actor text, payload jsonb, deep text);\n"
	// whole wraps each root in parentheses: then the statement reads the
	// whole jsonb, and arr does not look into the JSON.
	forms := map[string]string{
		"on":    "-- arr:on CompletionRecorded\nINSERT INTO r VALUES (:position, :data->'payload'->>'model', :data -> 'payload' -> 'cost_micro_usd', :data->>'seq', :metadata->>'actor', :data->'payload', :data->'payload'->'model'->'a'->>0);\n",
		"batch": "-- arr:batch CompletionRecorded\nINSERT INTO r SELECT e.position, data->'payload'->>'model', e.data -> 'payload' -> 'cost_micro_usd', data->>'seq', metadata->>'actor', data->'payload', data->'payload'->'model'->'a'->>0 FROM :events AS e;\n",
	}
	want := map[string]bool{}
	for form, section := range forms {
		chains := h.define(t, "-- arr:projection chains_"+form+"\n"+table+section)
		whole := h.define(t, "-- arr:projection whole_"+form+"\n"+table+
			strings.NewReplacer(":data", "(:data)", ":metadata", "(:metadata)", "e.data", "(e.data)", " data", " (data)", " metadata", " (metadata)").Replace(section))
		h.waitFor(t, chains.Name, head)
		h.waitFor(t, whole.Name, head)
		for name, paths := range map[string]bool{chains.Name: true, whole.Name: false} {
			var src string
			if err := h.pool.QueryRow(context.Background(), `SELECT string_agg(prosrc, ' ') FROM pg_proc WHERE pronamespace = $1::regnamespace`,
				projections.Schema(name)).Scan(&src); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(src, "arr__p1") != paths {
				t.Fatalf("%s: reads paths %v, want %v: the test would prove nothing", name, !paths, paths)
			}
		}
		const q = "SELECT position, model, cost, seq, actor, payload, deep FROM r ORDER BY position"
		got, exp := h.query(t, chains.Name, q), h.query(t, whole.Name, q)
		if len(got.Rows) != len(docs) || fmt.Sprint(got.Rows) != fmt.Sprint(exp.Rows) {
			t.Errorf("%s: chains read\n%v\nthe whole jsonb\n%v", form, got.Rows, exp.Rows)
		}
		want[form] = true
	}
	if len(want) != 2 {
		t.Fatal("a form was not compared")
	}
}

// TestDropOutlastsTheIdleBound: a drop holds the projection's checkpoint
// in a transaction the server ends once idle for BatchIdle (so a frozen
// `arr projections drop` frees the live runner), and keeps it busy while
// the role's session waits to drop the schemas: a reader holding a table
// of the projection for 2×BatchIdle does not make the drop fail, and the
// checkpoint is held meanwhile.
func TestDropOutlastsTheIdleBound(t *testing.T) {
	h := newHarness(t, sqlproj.Config{})
	ctx := context.Background()
	p, reader := h.droppedAndRead(t)
	type result struct {
		dropped bool
		err     error
	}
	done := make(chan result, 1)
	go func() {
		dropped, err := h.engine.Drop(ctx, p.Name)
		done <- result{dropped, err}
	}()
	time.Sleep(2*projections.BatchIdle + time.Second)
	var held bool
	if err := h.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM projection_checkpoints WHERE name = $1 FOR UPDATE SKIP LOCKED) IS FALSE`, p.Name).Scan(&held); err != nil {
		t.Fatal(err)
	}
	if !held {
		t.Fatal("the checkpoint is free while the drop waits: the drop's transaction was ended")
	}
	if err := reader.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-done:
		if r.err != nil || !r.dropped {
			t.Fatalf("drop after waiting %v: %v %v", 2*projections.BatchIdle, r.dropped, r.err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the drop did not end 30s after the reader let go")
	}
}
