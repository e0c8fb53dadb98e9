package main_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// exportedEvent is one line of `arr events export --format ndjson`.
type exportedEvent struct {
	ID            string          `json:"id"`
	StreamID      string          `json:"stream_id"`
	Type          string          `json:"type"`
	SchemaVersion int             `json:"schema_version"`
	Data          json.RawMessage `json:"data"`
	Metadata      struct {
		Actor string `json:"actor"`
	} `json:"metadata"`
	RecordedAt    time.Time `json:"recorded_at"`
	StreamVersion uint64    `json:"stream_version"`
	Position      uint64    `json:"position"`
}

// ndjsonExport runs `arr events export --format ndjson` with args and
// decodes its lines.
func ndjsonExport(t *testing.T, e *env, args ...string) []exportedEvent {
	t.Helper()
	out, errs, code := e.arr(append([]string{"events", "export", "--format", "ndjson"}, args...)...)
	if code != 0 {
		t.Fatalf("ndjson export %v: exit %d: %s", args, code, errs)
	}
	var evs []exportedEvent
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var ev exportedEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("export line %q: %v", sc.Text(), err)
		}
		evs = append(evs, ev)
	}
	return evs
}

// duckdb answers named queries over a Parquet file (the view `events`)
// with DuckDB, through scripts/clients/duckdb/query.mjs (the
// @duckdb/node-api npm package; scripts/test.sh installs it).
func duckdb(t *testing.T, file string, queries map[string]string) map[string][]map[string]any {
	t.Helper()
	dir, _ := filepath.Abs("../../scripts/clients/duckdb")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@duckdb", "node-api", "package.json")); err != nil {
		t.Fatalf("the @duckdb/node-api npm package is not installed in %s: run scripts/test.sh (or npm ci there)", dir)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not installed: run scripts/test.sh, which installs it")
	}
	q, _ := json.Marshal(queries)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "query.mjs", file)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(string(q))
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("duckdb: %v\n%s\n%s", err, out, stderr)
	}
	var res map[string][]map[string]any
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("duckdb output %q: %v", out, err)
	}
	return res
}

// num reads a number DuckDB's JSON rendering gave as a string or a number.
func num(t *testing.T, v any) int64 {
	t.Helper()
	switch v := v.(type) {
	case string:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("number %q: %v", v, err)
		}
		return n
	case float64:
		return int64(v)
	case nil:
		return 0
	}
	t.Fatalf("not a number: %#v", v)
	return 0
}

// TestEventsExportParquet: a log with accounts, keys and gateway
// completions, exported as Parquet, reads in DuckDB with the envelope's
// column types, and its counts, positions, times and a payload sum (the
// completions' cost, by json_extract) equal the log's as the NDJSON export
// and `arr events types` give them; the filters export what they select.
func TestEventsExportParquet(t *testing.T) {
	g := newGateway(t, "enterprise")
	g.createAccount("second@example.com", "starter")
	g.mint("second@example.com", "records")
	for i := range 6 {
		code, _, body := g.chat(t, map[string]any{"messages": userMsg(fmt.Sprintf("Question number %d, a little longer each time%s", i, strings.Repeat(" and more", i)))})
		if code != http.StatusOK {
			t.Fatalf("completion %d: %d %v", i, code, body)
		}
	}
	var cat struct {
		Head  uint64 `json:"head"`
		Types []struct {
			Type           string `json:"type"`
			SchemaVersion  int    `json:"schema_version"`
			HandlerVersion int    `json:"handler_version"`
			Events         int64  `json:"events"`
			FirstPosition  uint64 `json:"first_position"`
			LastPosition   uint64 `json:"last_position"`
		} `json:"types"`
	}
	g.mustArr(&cat, "events", "types", "--json")
	head := cat.Head
	log := ndjsonExport(t, g.env, "--to", fmt.Sprint(head))
	if uint64(len(log)) != head {
		t.Fatalf("ndjson export of 1..%d: %d events", head, len(log))
	}

	// What the log holds, computed here from the NDJSON export.
	type agg struct{ n, first, last int64 }
	byType := map[string]*agg{}
	var cost, micros, keyActors int64
	for _, ev := range log {
		a := byType[ev.Type]
		if a == nil {
			a = &agg{first: int64(ev.Position)}
			byType[ev.Type] = a
		}
		a.n++
		a.last = int64(ev.Position)
		micros += ev.RecordedAt.UnixMicro()
		if strings.HasPrefix(ev.Metadata.Actor, "key:") {
			keyActors++
		}
		if ev.Type == "CompletionRecorded" {
			var d struct {
				Payload struct {
					Cost int64 `json:"cost_micro_usd"`
				} `json:"payload"`
			}
			if err := json.Unmarshal(ev.Data, &d); err != nil {
				t.Fatal(err)
			}
			cost += d.Payload.Cost
		}
	}
	if byType["CompletionRecorded"] == nil || byType["CompletionRecorded"].n != 6 || cost <= 0 {
		t.Fatalf("the log holds %+v completions costing %d", byType["CompletionRecorded"], cost)
	}
	// The catalog's counts agree (the completions are all in; later
	// events, such as usage counts, may come after head).
	for _, ty := range cat.Types {
		if ty.Type == "CompletionRecorded" {
			a := byType[ty.Type]
			if ty.Events != a.n || int64(ty.FirstPosition) != a.first || int64(ty.LastPosition) != a.last || ty.SchemaVersion != 2 || ty.HandlerVersion != 2 {
				t.Fatalf("arr events types says %+v; the log %+v", ty, a)
			}
		}
	}

	file := filepath.Join(t.TempDir(), "events.parquet")
	out, errs, code := g.arr("events", "export", "--format", "parquet", "--to", fmt.Sprint(head), "--out", file)
	if code != 0 || out != "" || !strings.Contains(errs, fmt.Sprintf("export: done, %d events", head)) {
		t.Fatalf("parquet export: exit %d, stdout %q, stderr %s", code, out, errs)
	}
	res := duckdb(t, file, map[string]string{
		"columns": `SELECT column_name, column_type FROM (DESCRIBE events)`,
		"types":   `SELECT type, count(*) AS n, min(position) AS first, max(position) AS last FROM events GROUP BY type`,
		"totals": `SELECT count(*) AS n, count(DISTINCT event_id) AS ids, min(position) AS first, max(position) AS last,
			sum(epoch_us(recorded_at)) AS micros, count(*) FILTER (WHERE metadata->>'$.actor' LIKE 'key:%') AS key_actors FROM events`,
		"cost": `SELECT sum(json_extract(data, '$.payload.cost_micro_usd')::BIGINT) AS cost, count(*) AS n,
			min(schema_version) AS v FROM events WHERE type = 'CompletionRecorded'`,
	})
	wantCols := map[string]string{"position": "BIGINT", "event_id": "UUID", "stream": "VARCHAR", "stream_version": "BIGINT", "type": "VARCHAR",
		"schema_version": "INTEGER", "recorded_at": "TIMESTAMP WITH TIME ZONE", "data": "JSON", "metadata": "JSON"}
	for _, c := range res["columns"] {
		name, typ := c["column_name"].(string), c["column_type"].(string)
		if wantCols[name] != typ {
			t.Errorf("column %s is %s, want %s", name, typ, wantCols[name])
		}
		delete(wantCols, name)
	}
	if len(wantCols) != 0 {
		t.Errorf("columns missing: %v", wantCols)
	}
	if len(res["types"]) != len(byType) {
		t.Errorf("DuckDB sees %d types, the log %d", len(res["types"]), len(byType))
	}
	for _, r := range res["types"] {
		a := byType[r["type"].(string)]
		if a == nil || num(t, r["n"]) != a.n || num(t, r["first"]) != a.first || num(t, r["last"]) != a.last {
			t.Errorf("DuckDB: %v; the log: %+v", r, a)
		}
	}
	tot := res["totals"][0]
	if num(t, tot["n"]) != int64(head) || num(t, tot["ids"]) != int64(head) || num(t, tot["first"]) != 1 || num(t, tot["last"]) != int64(head) ||
		num(t, tot["micros"]) != micros || num(t, tot["key_actors"]) != keyActors {
		t.Errorf("DuckDB totals %v; the log: %d events, %d µs summed, %d by keys", tot, head, micros, keyActors)
	}
	t.Logf("DuckDB: %v %v; the log: %d events, cost %d", tot, res["cost"][0], head, cost)
	if c := res["cost"][0]; num(t, c["cost"]) != cost || num(t, c["n"]) != 6 || num(t, c["v"]) != 2 {
		t.Errorf("DuckDB: completions %v; the log: 6 costing %d", c, cost)
	}

	// Filters: what each exports is what the log selects.
	mid := log[len(log)/2]
	cases := []struct {
		name string
		args []string
		keep func(exportedEvent) bool
	}{
		{name: "types", args: []string{"--types", "CompletionRecorded,AccountCreated"},
			keep: func(e exportedEvent) bool { return e.Type == "CompletionRecorded" || e.Type == "AccountCreated" }},
		{name: "stream", args: []string{"--stream", "auditchain"}, keep: func(e exportedEvent) bool { return e.StreamID == "auditchain" }},
		{name: "positions", args: []string{"--from", "3", "--to", fmt.Sprint(head - 2)},
			keep: func(e exportedEvent) bool { return e.Position > 3 && e.Position <= head-2 }},
		{name: "since", args: []string{"--since", mid.RecordedAt.Format(time.RFC3339Nano)},
			keep: func(e exportedEvent) bool { return !e.RecordedAt.Before(mid.RecordedAt) }},
		{name: "until and a type", args: []string{"--until", mid.RecordedAt.Format(time.RFC3339Nano), "--types", "CompletionRecorded"},
			keep: func(e exportedEvent) bool {
				return e.RecordedAt.Before(mid.RecordedAt) && e.Type == "CompletionRecorded"
			}},
	}
	for _, tc := range cases {
		var want []int64
		for _, e := range log {
			if tc.keep(e) {
				want = append(want, int64(e.Position))
			}
		}
		args := tc.args
		if !strings.Contains(strings.Join(args, " "), "--to") {
			args = append(args, "--to", fmt.Sprint(head))
		}
		f := filepath.Join(t.TempDir(), "filtered.parquet")
		if _, errs, code := g.arr(append([]string{"events", "export", "--format", "parquet", "--out", f}, args...)...); code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.name, code, errs)
		}
		got := duckdb(t, f, map[string]string{"p": `SELECT position FROM events ORDER BY position`})["p"]
		if len(got) != len(want) {
			t.Errorf("%s: DuckDB reads %d events, the log selects %d", tc.name, len(got), len(want))
			continue
		}
		for i, r := range got {
			if num(t, r["position"]) != want[i] {
				t.Errorf("%s: position %d is %v, want %d", tc.name, i, r["position"], want[i])
				break
			}
		}
		if nd := ndjsonExport(t, g.env, args...); len(nd) != len(want) {
			t.Errorf("%s: the NDJSON export has %d events, want %d", tc.name, len(nd), len(want))
		}
	}
	if _, errs, code := g.arr("events", "export", "--format", "parquet", "--types", "NoSuchThingHappened", "--out", file); code == 0 || !strings.Contains(errs, "not an event type") {
		t.Fatalf("an unknown type: exit %d, %s", code, errs)
	}
}
