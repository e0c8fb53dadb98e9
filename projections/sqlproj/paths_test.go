package sqlproj

import (
	"fmt"
	"strings"
	"testing"
)

// show renders a statement's chains: root[keys] as ->> (text) or -> (jsonb),
// and the text each replaces.
func show(text string, reads []read) string {
	var out []string
	for _, r := range reads {
		op := "->"
		if r.text {
			op = "->>"
		}
		out = append(out, fmt.Sprintf("%s%s%q %s", r.path.root, op, r.path.keys, text[r.start:r.end]))
	}
	return strings.Join(out, "; ")
}

// TestEventReads: a chain is read in the JSON only where PostgreSQL's
// grammar makes it a subexpression of its own.
func TestEventReads(t *testing.T) {
	cases := []struct {
		sql, reads, full string
	}{
		{`INSERT INTO t VALUES (:data->>'model')`, `data->>["model"] :data->>'model'`, ``},
		{`INSERT INTO t VALUES (:data -> 'payload' ->> 'model', :data->'payload'->'cost')`,
			`data->>["payload" "model"] :data -> 'payload' ->> 'model'; data->["payload" "cost"] :data->'payload'->'cost'`, ``},
		{`INSERT INTO t VALUES ((:data->>'n')::int)`, `data->>["n"] :data->>'n'`, ``},
		{`INSERT INTO t VALUES (:data->>'a' || 'x', :metadata->>'actor')`, `data->>["a"] :data->>'a'; metadata->>["actor"] :metadata->>'actor'`, ``},
		{`INSERT INTO t VALUES (x = :data->>'it''s')`, `data->>["it's"] :data->>'it''s'`, ``},
		// The key binds to what follows it, or the root to what precedes it.
		{`INSERT INTO t VALUES (:data->>'n'::int)`, ``, `data`},
		{`INSERT INTO t VALUES (:data->'a'->>'n'::int)`, `data->["a"] :data->'a'`, ``},
		{`INSERT INTO t VALUES (:data->>'n' + 1)`, ``, `data`},
		{`INSERT INTO t VALUES (:data->'a' -> 'b' COLLATE "C")`, `data->["a"] :data->'a'`, ``},
		{`INSERT INTO t VALUES ('x' || :data->>'a')`, ``, `data`},
		{`INSERT INTO t VALUES (-:data->>'a')`, ``, `data`},
		{`INSERT INTO t VALUES (now() AT TIME ZONE :data->>'tz')`, ``, `data`},
		{"INSERT INTO t VALUES (:data->>'a'\n'b')", ``, `data`},
		// Not a text key, or the whole value.
		{`INSERT INTO t VALUES (:data->0)`, ``, `data`},
		{`INSERT INTO t VALUES (:data->>E'a')`, ``, `data`},
		{`INSERT INTO t VALUES (:data->>$$a$$)`, ``, `data`},
		{`INSERT INTO t VALUES (:data)`, ``, `data`},
		{`INSERT INTO t VALUES ((:data)->>'a')`, ``, `data`},
		{`INSERT INTO t VALUES (:data #>> '{a}', :data->>'b')`, `data->>["b"] :data->>'b'`, `data`},
		{`INSERT INTO t VALUES (:position, :type, ':data->>''a''')`, ``, ``},
	}
	for _, c := range cases {
		st := mustStatement(t, "-- arr:on CompletionRecorded\n"+c.sql)
		reads, full := eventReads(st)
		var fulls []string
		for _, r := range []string{"data", "metadata"} {
			if full[r] {
				fulls = append(fulls, r)
			}
		}
		if got := show(st.Text, reads); got != c.reads || strings.Join(fulls, ",") != c.full {
			t.Errorf("%s\n reads %s, whole %v\n want  %s, whole %s", c.sql, got, fulls, c.reads, c.full)
		}
	}
}

// TestBatchReads: a batch statement reads chains only when arr can tell
// that every mention of data and metadata is one, of :events.
func TestBatchReads(t *testing.T) {
	cases := []struct {
		sql, reads string
		pushed     bool
	}{
		{`INSERT INTO spend SELECT recorded_at::date, data->'payload'->>'model', sum((data->'payload'->>'cost_micro_usd')::bigint), count(*) FROM :events GROUP BY 1, 2`,
			`data->>["payload" "model"] data->'payload'->>'model'; data->>["payload" "cost_micro_usd"] data->'payload'->>'cost_micro_usd'`, true},
		{`INSERT INTO t SELECT e.data->>'a', e.metadata->'actor' FROM :events AS e WHERE e.data->>'b' = 'x'`,
			`data->>["a"] e.data->>'a'; metadata->["actor"] e.metadata->'actor'; data->>["b"] e.data->>'b'`, true},
		{`INSERT INTO t SELECT position * 2, data->>'a' FROM :events e`, `data->>["a"] data->>'a'`, true},
		{`INSERT INTO t SELECT count(*) FROM :events`, ``, true},
		// The whole value, a whole row, every column, or names arr cannot place.
		{`INSERT INTO t SELECT data FROM :events`, ``, false},
		{`INSERT INTO t SELECT data #>> '{a}' FROM :events`, ``, false},
		{`INSERT INTO t SELECT * FROM :events`, ``, false},
		{`INSERT INTO t SELECT e.*, data->>'a' FROM :events e`, ``, false},
		{`INSERT INTO t SELECT to_jsonb(e), data->>'a' FROM :events e`, ``, false},
		{`INSERT INTO t SELECT o.data->>'a' FROM :events e JOIN other o USING (position)`, ``, false},
		{`INSERT INTO t SELECT d->>'a' FROM (SELECT data AS d FROM :events) s`, ``, false},
		{`INSERT INTO t SELECT a FROM :events AS e(p, ty, s, v, sv, r, data, m) WHERE data->>'a' = 'x'`, ``, false},
		{`INSERT INTO t SELECT data->>'a' FROM :events NATURAL JOIN :events`, ``, false},
		{`INSERT INTO t SELECT arr__p1 FROM :events`, ``, false},
		{`INSERT INTO t SELECT 'x' || data->>'a' FROM :events`, ``, false},
		{`INSERT INTO t SELECT data->>'n'::int FROM :events RETURNING *`, ``, false},
	}
	for _, c := range cases {
		st := mustStatement(t, "-- arr:batch CompletionRecorded\n"+c.sql)
		reads, ok := batchReads(st, func(string) bool { return false })
		if got := show(st.Text, reads); ok != c.pushed || (ok && got != c.reads) {
			t.Errorf("%s\n pushed %v, reads %s\n want   %v, %s", c.sql, ok, got, c.pushed, c.reads)
		}
	}
	st := mustStatement(t, "-- arr:batch CompletionRecorded\nINSERT INTO t SELECT data->>'a' FROM :events")
	if _, ok := batchReads(st, func(w string) bool { return w == "data" }); ok {
		t.Error("a definition whose DDL names data: the statement read chains only")
	}
}

// mustStatement parses a one-section definition and returns its statement.
func mustStatement(t *testing.T, section string) Statement {
	t.Helper()
	d, err := Parse("t.sql", "-- arr:projection t\nCREATE TABLE t (a text);\n"+section+";\n", func(string) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	return d.Sections[0].Statements[0]
}

// TestCompileReadsPaths: the projection in both forms reads two
// values of each event's JSON, never the whole of it.
func TestCompileReadsPaths(t *testing.T) {
	for _, src := range []string{
		"-- arr:projection s\nCREATE TABLE spend (day date, model text, cost_micro bigint, n bigint, PRIMARY KEY (day, model));\n-- arr:on CompletionRecorded\n" +
			"INSERT INTO spend VALUES (:recorded_at::date, :data->>'model', (:data->>'cost_micro_usd')::bigint, 1)\n" +
			"ON CONFLICT (day, model) DO UPDATE SET cost_micro = spend.cost_micro + EXCLUDED.cost_micro, n = spend.n + 1;\n",
		"-- arr:projection s\nCREATE TABLE spend (day date, model text, cost_micro bigint, n bigint, PRIMARY KEY (day, model));\n-- arr:batch CompletionRecorded\n" +
			"INSERT INTO spend SELECT recorded_at::date, data->>'model', sum((data->>'cost_micro_usd')::bigint), count(*) FROM :events GROUP BY 1, 2\n" +
			"ON CONFLICT (day, model) DO UPDATE SET cost_micro = spend.cost_micro + EXCLUDED.cost_micro, n = spend.n + EXCLUDED.n;\n",
	} {
		d, err := Parse("s.sql", src, func(string) bool { return true })
		if err != nil {
			t.Fatal(err)
		}
		p := compile(d)
		if p.data || p.metadata || len(p.paths) != 2 {
			t.Errorf("%s: whole data %v, metadata %v, paths %v; want two paths only", d.Sections[0].Directive(), p.data, p.metadata, p.paths)
		}
		if strings.Contains(p.apply, ":data") || strings.Contains(p.apply, "data->>") {
			t.Errorf("arr_apply still reads data:\n%s", p.apply)
		}
	}
}
