package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// spendByModel is the projection; the model and the cost of a
// completion are in its audit entry's payload.
const spendByModel = `-- arr:projection spend_by_model
CREATE TABLE spend (day date, model text, cost_micro bigint, n bigint, PRIMARY KEY (day, model));
-- arr:on CompletionRecorded
INSERT INTO spend VALUES (:recorded_at::date, :data->'payload'->>'model', (:data->'payload'->>'cost_micro_usd')::bigint, 1)
ON CONFLICT (day, model) DO UPDATE SET cost_micro = spend.cost_micro + EXCLUDED.cost_micro, n = spend.n + 1;
`

// TestSQLProjectionEndToEnd: on a running `arr up`, a bad definition file
// gets a clear error and changes nothing; the spend_by_model is
// created from a file, built from the completions already made, kept up
// to date with new ones by the running process, queried in three formats,
// rebuilt while completions keep coming, and dropped.
func TestSQLProjectionEndToEnd(t *testing.T) {
	g := newGateway(t, "enterprise")
	pool := openPool(t, g.dbURL)
	ctx := context.Background()
	dir := t.TempDir()
	write := func(name, src string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	prompt := 0
	complete := func(n int) {
		t.Helper()
		for range n {
			prompt++
			if code, _, body := g.chat(t, map[string]any{"messages": userMsg(fmt.Sprintf("Count to %d", prompt))}); code != http.StatusOK {
				t.Fatalf("completion: %d %v", code, body)
			}
		}
	}
	complete(3)

	// Bad files: a clear error naming the file, line and statement, and
	// nothing changes (no event, no schema, no role, no checkpoint).
	for _, tc := range []struct{ name, src, want string }{
		{"reads_events.sql", "-- arr:projection bad\nCREATE TABLE t (n bigint);\n-- arr:on CompletionRecorded\nINSERT INTO t SELECT count(*) FROM public.events;\n",
			"reads_events.sql:4:1: arr:on CompletionRecorded, statement 1: permission denied for table events"},
		{"typo.sql", strings.Replace(spendByModel, "ON CONFLICT (day, model)", "ON CONFLICT (day, modle)", 1),
			`typo.sql:5:13: arr:on CompletionRecorded, statement 1: column "modle" does not exist`},
		{"unknown_type.sql", strings.Replace(spendByModel, "-- arr:on CompletionRecorded", "-- arr:on CompletionsRecorded", 1),
			"unknown_type.sql:3: unknown event type CompletionsRecorded"},
	} {
		_, errOut, code := g.arr("projections", "create", write(tc.name, tc.src), "--by", "analyst")
		if code == 0 || !strings.Contains(errOut, tc.want) {
			t.Fatalf("create %s: exit %d, stderr %q; want an error with %q", tc.name, code, errOut, tc.want)
		}
	}
	if n := count(t, pool, `SELECT count(*) FROM events WHERE event_type LIKE 'SQLProjection%'`); n != 0 {
		t.Fatalf("bad files appended %d events", n)
	}
	if n := count(t, pool, `SELECT (SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'rm\_bad%' OR nspname LIKE 'rm\_spend%' OR nspname LIKE 'arr\_check%')
		+ (SELECT count(*) FROM pg_roles WHERE rolname LIKE '`+rolePrefix(t, pool)+`%' OR rolname LIKE 'arrsql\_check%')
		+ (SELECT count(*) FROM projection_checkpoints WHERE name IN ('bad', 'spend_by_model'))`); n != 0 {
		t.Fatalf("bad files left %d schemas, roles or checkpoints", n)
	}

	// Create: built from the three completions already made.
	var created struct {
		Name    string `json:"name"`
		BuiltTo uint64 `json:"built_to"`
		Parked  int    `json:"parked"`
	}
	g.mustArr(&created, "projections", "create", write("spend.sql", spendByModel), "--by", "analyst", "--json")
	if created.Name != "spend_by_model" || created.Parked != 0 {
		t.Fatalf("created %+v", created)
	}
	t.Cleanup(func() { dropRoles(t, pool) })
	waitSpend(t, g, pool, "after create")
	// New completions reach it through the running arr up alone (the CLI
	// that created it has exited).
	complete(4)
	waitSpend(t, g, pool, "live")
	eventually(t, 20*time.Second, "spend_by_model in /metrics", func() bool {
		return strings.Contains(metrics(t, g.gateway), `arr_projection_position{projection="spend_by_model"}`)
	})
	var st struct {
		Projections []struct {
			Name string `json:"name"`
			Lag  int64  `json:"lag_events"`
		} `json:"projections"`
	}
	g.mustArr(&st, "projections", "status", "--json", "--sample", "0")
	if !strings.Contains(fmt.Sprint(st.Projections), "spend_by_model") {
		t.Fatalf("status lacks spend_by_model: %+v", st)
	}

	// The three formats.
	out, errOut, code := g.arr("projections", "query", "spend_by_model", "SELECT model, sum(n) AS n FROM spend GROUP BY model ORDER BY model", "--format", "csv")
	if code != 0 || !strings.HasPrefix(out, "model,n\n") {
		t.Fatalf("csv: exit %d %q %q", code, out, errOut)
	}
	out, _, code = g.arr("projections", "query", "spend_by_model", "SELECT sum(n) AS completions FROM spend;")
	if code != 0 || !strings.Contains(out, "completions") || !strings.Contains(out, "(1 row)") {
		t.Fatalf("table: exit %d %q", code, out)
	}
	// Read-only, and only its schema.
	for q, want := range map[string]string{
		"DELETE FROM spend RETURNING *":               "syntax error",
		"SELECT count(*) FROM public.events":          "permission denied for table events",
		"SELECT set_config('role', 'postgres', true)": `cannot set parameter "role"`,
	} {
		_, errOut, code := g.arr("projections", "query", "spend_by_model", q)
		if code == 0 || !strings.Contains(errOut, want) {
			t.Fatalf("query %q: exit %d %q, want %q", q, code, errOut, want)
		}
	}

	// Rebuild while it serves: completions and queries go on meanwhile.
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 50; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, errOut, code := g.arr("projections", "query", "spend_by_model", "SELECT sum(n) FROM spend"); code != 0 {
				t.Errorf("query during the rebuild: %s", errOut)
				return
			}
		}
	}()
	done := make(chan struct{})
	go func() { defer close(done); complete(5) }()
	g.mustArr(nil, "projections", "rebuild", "spend_by_model")
	<-done
	close(stop)
	wg.Wait()
	waitSpend(t, g, pool, "after the rebuild")

	// Drop: recorded, no longer followed by the running arr up, gone.
	g.mustArr(nil, "projections", "drop", "spend_by_model", "--by", "analyst")
	eventually(t, 20*time.Second, "arr up forgets spend_by_model", func() bool {
		return !strings.Contains(metrics(t, g.gateway), `projection="spend_by_model"`)
	})
	complete(1)
	if n := count(t, pool, `SELECT (SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'rm\_spend%')
		+ (SELECT count(*) FROM pg_roles WHERE rolname LIKE '`+rolePrefix(t, pool)+`%') + (SELECT count(*) FROM projection_checkpoints WHERE name = 'spend_by_model')`); n != 0 {
		t.Fatalf("the drop left %d schemas, roles or checkpoints", n)
	}
	if _, errOut, code := g.arr("projections", "query", "spend_by_model", "SELECT 1"); code == 0 || !strings.Contains(errOut, `no projection named "spend_by_model"`) {
		t.Fatalf("query after the drop: exit %d %q", code, errOut)
	}
	var history []string
	rows, err := pool.Query(ctx, `SELECT event_type || ' ' || (data->>'name') || ' by ' || coalesce(data->>'defined_by', data->>'dropped_by') FROM events
		WHERE event_type LIKE 'SQLProjection%' ORDER BY position`)
	if err != nil {
		t.Fatal(err)
	}
	if history, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
		t.Fatal(err)
	}
	if strings.Join(history, "; ") != "SQLProjectionDefined spend_by_model by analyst; SQLProjectionDropped spend_by_model by analyst" {
		t.Fatalf("history: %v", history)
	}
}

// waitSpend waits until spend_by_model, as `arr projections query` reads
// it, counts every completion of the log and sums their costs.
func waitSpend(t *testing.T, g *gw, pool *pgxpool.Pool, when string) {
	t.Helper()
	var want []map[string]any
	eventually(t, 30*time.Second, "spend_by_model "+when, func() bool {
		var wantJSON string
		if err := pool.QueryRow(context.Background(), `SELECT coalesce(json_agg(x ORDER BY model), '[]')::text FROM (
			SELECT data->'payload'->>'model' AS model, sum((data->'payload'->>'cost_micro_usd')::bigint) AS cost, count(*) AS n
			FROM events WHERE event_type = 'CompletionRecorded' GROUP BY 1) x`).Scan(&wantJSON); err != nil {
			t.Fatal(err)
		}
		_ = json.Unmarshal([]byte(wantJSON), &want)
		out, errOut, code := g.arr("projections", "query", "spend_by_model",
			"SELECT model, sum(cost_micro) AS cost, sum(n) AS n FROM spend GROUP BY model ORDER BY model", "--format", "json")
		if code != 0 {
			t.Fatalf("query: %s", errOut)
		}
		var got []map[string]any
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("query output %q: %v", out, err)
		}
		return len(want) > 0 && fmt.Sprint(got) == fmt.Sprint(want)
	})
}

func openPool(t *testing.T, url string) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

func count(t *testing.T, pool *pgxpool.Pool, q string) int64 {
	t.Helper()
	var n int64
	if err := pool.QueryRow(context.Background(), q).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func metrics(t *testing.T, base string) string {
	t.Helper()
	_, body := get(t, base+"/metrics", nil)
	return string(body)
}

// rolePrefix is the LIKE pattern prefix of the SQL projection roles of
// the pool's database.
func rolePrefix(t *testing.T, pool *pgxpool.Pool) string {
	t.Helper()
	return fmt.Sprintf("arrsql\\_%d\\_", count(t, pool, `SELECT oid::bigint FROM pg_database WHERE datname = current_database()`))
}

// dropRoles drops the SQL projection roles of the test's database: roles
// belong to the server and would outlive it.
func dropRoles(t *testing.T, pool *pgxpool.Pool) {
	ctx := context.Background()
	rows, err := pool.Query(ctx, `SELECT rolname FROM pg_roles WHERE rolname LIKE $1`, rolePrefix(t, pool)+"%")
	if err != nil {
		t.Log(err)
		return
	}
	roles, _ := pgx.CollectRows(rows, pgx.RowTo[string])
	for _, r := range roles {
		id := pgx.Identifier{r}.Sanitize()
		if _, err := pool.Exec(ctx, `DROP OWNED BY `+id+`; DROP ROLE `+id); err != nil {
			t.Logf("dropping role %s: %v", r, err)
		}
	}
}
