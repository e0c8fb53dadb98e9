package answerdocs_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/migrations/migratetest"
	"github.com/arr-dev/arr/projections/answerdocs"
	"github.com/arr-dev/arr/projections/answerdocs/answerdocstest"
)

// statsOf is the read model's corpus statistics and every term's
// document frequency (those above 0), as stored, and as recomputed from
// the passages.
func statsOf(t *testing.T, pool *pgxpool.Pool) (stored, recomputed map[string]int64) {
	t.Helper()
	read := func(sql string) map[string]int64 {
		rows, err := pool.Query(context.Background(), sql)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		m := map[string]int64{}
		for rows.Next() {
			var k string
			var v int64
			if err := rows.Scan(&k, &v); err != nil {
				t.Fatal(err)
			}
			m[k] = v
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return m
	}
	const corpus = `SELECT unnest(ARRAY['#passages', '#title', '#head', '#body']), unnest(ARRAY[passages, sum_title, sum_head, sum_body])`
	stored = read(`SELECT term, df::bigint FROM rm_answer_docs.term_df WHERE df > 0 UNION ALL ` + corpus + ` FROM rm_answer_docs.corpus`)
	recomputed = read(`SELECT lex, count(*) FROM rm_answer_docs.passages, unnest(tsvector_to_array(tsv)) lex GROUP BY lex UNION ALL ` +
		corpus + ` FROM (SELECT count(*) passages, coalesce(sum(len_title), 0) sum_title, coalesce(sum(len_head), 0) sum_head,
			coalesce(sum(len_body), 0) sum_body FROM rm_answer_docs.passages) c`)
	return stored, recomputed
}

// TestSearchStatisticsFollowEveryVersion: each batch moves term_df and
// corpus by the passages it drops and adds, so after documents are added
// and replaced (one by a version with less text) the statistics equal
// those recomputed from the passages, and a rebuild from the log yields
// the same tables.
func TestSearchStatisticsFollowEveryVersion(t *testing.T) {
	x := newIndex(t)
	x.Add(t,
		answerdocstest.Doc("gc", "git gc", []string{"Configuration"}, "gc.auto defaults to 6700 loose objects.", "Packing refs is cheap."),
		answerdocstest.Doc("json", "json — JSON encoder", []string{"Basic Usage"}, "The indent parameter defaults to None."),
	)
	x.Add(t, answerdocstest.Doc("gc", "git gc", []string{"Configuration"}, "gc.auto defaults to 7000."),
		answerdocstest.Doc("zorblax", "Zorblax engine", nil, "The Zorblax engine runs at 4200 rpm by default."))
	stored, recomputed := statsOf(t, x.Pool)
	if !reflect.DeepEqual(stored, recomputed) {
		t.Fatalf("statistics stored %v\nrecomputed from the passages %v", stored, recomputed)
	}
	if stored["6700"] != 0 || stored["7000"] != 1 || stored["#passages"] != 3 {
		t.Fatalf("after the update: df(6700) %d, df(7000) %d, %d passages; want 0, 1, 3", stored["6700"], stored["7000"], stored["#passages"])
	}
	if err := x.Runner.Rebuild(context.Background(), answerdocs.Name, nil); err != nil {
		t.Fatal(err)
	}
	rebuilt, _ := statsOf(t, x.Pool)
	if !reflect.DeepEqual(rebuilt, stored) {
		t.Fatalf("rebuilt statistics %v\nincremental %v", rebuilt, stored)
	}
	c, err := answerdocs.NewQueries(x.Pool).Candidates(context.Background(), []string{"zorblax", "rpm"}, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Passages) != 1 || c.Passages[0].DocID != "zorblax" || c.Stats.Passages != 3 || c.Stats.DF["zorblax"] != 1 {
		t.Fatalf("candidates after the rebuild %+v", c)
	}
}

// postingsOf is the read model's postings (term, passage: score) as
// stored, and as PostgreSQL's ts_rank of each passage's tsvector and
// term computes them.
func postingsOf(t *testing.T, pool *pgxpool.Pool) (stored, recomputed map[string]float32) {
	t.Helper()
	read := func(sql string) map[string]float32 {
		rows, err := pool.Query(context.Background(), sql)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		m := map[string]float32{}
		for rows.Next() {
			var k string
			var v float32
			if err := rows.Scan(&k, &v); err != nil {
				t.Fatal(err)
			}
			m[k] = v
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return m
	}
	stored = read(`SELECT term || ' ' || doc_id || '#' || seq, score FROM rm_answer_docs.postings`)
	recomputed = read(`SELECT lex || ' ' || doc_id || '#' || seq,
			ts_rank('{0,0.5,1,0.75}', tsv, ('''' || replace(replace(lex, '\', '\\'), '''', '''''') || '''')::tsquery)
		FROM rm_answer_docs.passages, unnest(tsvector_to_array(tsv)) lex`)
	return stored, recomputed
}

// TestPostingsFollowEveryVersion: the impact-ordered postings hold every
// term of every passage's latest version, each scored as ts_rank scores
// it (bit for bit, repeated terms and every field's weight included),
// after documents are replaced and after a rebuild.
func TestPostingsFollowEveryVersion(t *testing.T) {
	x := newIndex(t)
	x.Add(t,
		answerdocstest.Doc("gc", "git gc gc", []string{"Configuration", "gc.auto"}, "gc.auto defaults to 6700 loose objects; gc gc gc gc gc.", "Packing refs is cheap, it's O'Brien's."),
		answerdocstest.Doc("json", "json — JSON encoder", []string{"Basic Usage"}, "The indent parameter defaults to None. JSON json json."),
	)
	x.Add(t, answerdocstest.Doc("gc", "git gc", []string{"Configuration"}, "gc.auto defaults to 7000."))
	stored, recomputed := postingsOf(t, x.Pool)
	if len(stored) == 0 || !reflect.DeepEqual(stored, recomputed) {
		t.Fatalf("postings stored %v\nrecomputed by ts_rank %v", stored, recomputed)
	}
	for k := range stored {
		if strings.HasPrefix(k, "6700 ") {
			t.Fatalf("a replaced version's posting is left: %v", stored)
		}
	}
	if err := x.Runner.Rebuild(context.Background(), answerdocs.Name, nil); err != nil {
		t.Fatal(err)
	}
	if rebuilt, _ := postingsOf(t, x.Pool); !reflect.DeepEqual(rebuilt, stored) {
		t.Fatalf("rebuilt postings %v\nincremental %v", rebuilt, stored)
	}
}

func newIndex(t *testing.T) *answerdocstest.Index {
	t.Helper()
	pool, _ := migratetest.NewPool(t)
	return answerdocstest.New(t, pool)
}
