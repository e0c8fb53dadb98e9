package answerdocs_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/arr-dev/arr/domain/answer"
	"github.com/arr-dev/arr/domain/answer/terms"
	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/projections"

	"github.com/arr-dev/arr/projections/answerdocs"
	"github.com/arr-dev/arr/projections/answerdocs/answerdocstest"
)

// word is the i-th of a family of distinct letter-only words (no
// digits: Split keeps them whole; the prefix keeps the stemmer off them).
func word(prefix string, i int) string {
	var b strings.Builder
	b.WriteString(prefix)
	for n := i; ; n /= 26 {
		b.WriteByte(byte('a' + n%26))
		if n < 26 {
			break
		}
	}
	b.WriteString("x")
	return b.String()
}

func words(prefix string, n int) string {
	ws := make([]string, n)
	for i := range ws {
		ws[i] = word(prefix, i)
	}
	return strings.Join(ws, " ")
}

// appendAndStep appends each document's version and steps the runner at
// most steps times (until it has nothing left), returning the errors of
// the steps that failed: the projection as a running arr drives it.
func appendAndStep(t *testing.T, x *answerdocstest.Index, steps int, docs ...answer.DocumentIndexed) []error {
	t.Helper()
	ctx := context.Background()
	for _, d := range docs {
		e, err := eventstore.Encode(d, eventstore.Metadata{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := x.Store.Append(ctx, answer.DocumentStreamID(d.DocID), eventstore.Any(), e); err != nil {
			t.Fatal(err)
		}
	}
	var errs []error
	for range steps {
		_, n, err := x.Runner.Step(ctx, answerdocs.Name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if n == 0 {
			break
		}
	}
	return errs
}

func candidateDocs(t *testing.T, x *answerdocstest.Index, qt ...string) []string {
	t.Helper()
	c, err := answerdocs.NewQueries(x.Pool).Candidates(context.Background(), qt, 10)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, p := range c.Passages {
		ids = append(ids, p.DocID)
	}
	return ids
}

// TestAtkAnswerDocsLongSentenceNotIndexed: a block that is one long
// "sentence" (no period: a word list, a minified page, a table flattened
// to prose) is never cut (chunkSentences cuts only at sentence ends), so
// its passage's tsvector passes PostgreSQL's 1 MB bound; the projection
// fails on it and parks the event, and the document — which
// IndexDocument reported "added" — is silently absent from the index,
// even by its first, ordinary paragraph.
func TestAtkAnswerDocsLongSentenceNotIndexed(t *testing.T) {
	x := newIndex(t)
	errs := appendAndStep(t, x, 6, answerdocstest.Doc("wordlist", "Glossary of the Zorblax engine", []string{"Terms"},
		"The Zorblax engine idles at 900 rpm.", words("qq", 120000)))
	t.Logf("step errors: %v", errs)
	var parked int
	if err := x.Pool.QueryRow(context.Background(), `SELECT count(*) FROM projection_parked WHERE projection = $1`, answerdocs.Name).Scan(&parked); err != nil {
		t.Logf("reading parked events: %v", err)
	}
	if got := candidateDocs(t, x, "zorblax", "idl"); len(got) == 0 {
		t.Fatalf("a document whose one block is a long unpunctuated sentence is not searchable at all (parked events: %d)", parked)
	}
}

// TestAtkAnswerDocsTitleAmplified: the page title is analysed into every
// passage's row (analysis and tsvector, weight A) and IndexDocument
// bounds neither the title nor the passage count, so a document of a
// 35 KB title and 400 short paragraphs (59 KB) is stored as ~2.6 MB of
// term analysis and tsvector even compressed (45×), and its title's terms
// counted 400 times into term_df: storage and flush time grow with
// title × passages.
func TestAtkAnswerDocsTitleAmplified(t *testing.T) {
	x := newIndex(t)
	var paras []string
	for i := range 400 {
		paras = append(paras, fmt.Sprintf("Paragraph %d of the manual says something short about %s.", i, word("pp", i)))
	}
	title := words("tt", 5000)
	d := answerdocstest.Doc("amplified", title, []string{"Manual"}, paras...)
	if errs := appendAndStep(t, x, 2, d); len(errs) > 0 {
		t.Logf("step errors: %v", errs)
	}
	var stored int64
	if err := x.Pool.QueryRow(context.Background(), `SELECT coalesce(sum(pg_column_size(analysis) + pg_column_size(tsv)), 0) FROM rm_answer_docs.passages`).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	input := int64(len(title))
	for _, p := range paras {
		input += int64(len(p))
	}
	if stored > 20*input {
		t.Fatalf("a %d-byte document is stored as %d bytes of analysis and tsvector (%.0f×): the title is repeated into every passage", input, stored, float64(stored)/float64(input))
	}
}

// TestAtkAnswerDocsTermDFGrowsForever: every term any version of any
// document ever held keeps a term_df row (at df 0 once no passage holds
// it), so a document updated over and over with new words — a page with
// a timestamp, a session id, a changing price list — grows term_df
// without bound while the corpus stays one passage.
func TestAtkAnswerDocsTermDFGrowsForever(t *testing.T) {
	x := newIndex(t)
	for v := range 30 {
		x.Add(t, answerdocstest.Doc("ticker", "Ticker", nil, words(word("v", v), 50)))
	}
	var rows, live int64
	if err := x.Pool.QueryRow(context.Background(), `SELECT count(*), count(*) FILTER (WHERE df > 0) FROM rm_answer_docs.term_df`).Scan(&rows, &live); err != nil {
		t.Fatal(err)
	}
	if rows > 2*live {
		t.Fatalf("term_df holds %d rows for %d terms any passage holds: rows of df 0 are never removed", rows, live)
	}
}

// TestAtkAnswerDocsBigDocumentStallsProjection: Store analyses each
// document's passages in Go between the batch's statements (passageRow,
// title terms re-analysed for every passage), and the batch's session is
// ended by the server when idle for projections.BatchIdle (3 s); that
// error (25P03) is Transient, so the batch is neither parked nor given
// more time but retried as it was, failing the same way: one document of
// a long title and many paragraphs stops the answer_docs projection, and
// no document indexed after it is ever searchable. By hand: `arr answer
// index add` of a 96 KB HTML file (an <h1> of 8,000 words, 600 short
// sections) said "added", then "batch ran out of time" (1 min, then
// 2 min); a small page indexed next was never applied (checkpoint stayed
// at 1, nothing parked).
func TestAtkAnswerDocsBigDocumentStallsProjection(t *testing.T) {
	x := newIndex(t)
	var paras []string
	for i := range 600 {
		paras = append(paras, fmt.Sprintf("Paragraph %d of the manual says something short about %s.", i, word("pp", i)))
	}
	big := answerdocstest.Doc("big", words("tt", 8000), []string{"Manual"}, paras...)
	after := answerdocstest.Doc("zorblax", "Zorblax engine", nil, "The Zorblax engine runs at 4200 rpm by default.")
	errs := appendAndStep(t, x, 4, big, after)
	if got := candidateDocs(t, x, "zorblax"); len(got) == 0 {
		t.Fatalf("a document indexed after a big one is not searchable after 4 runner steps; their errors: %v", errs)
	}
}

// statements counts the statements and transactions sent through a
// real pool.
type statements struct {
	projections.DB
	n, tx int
}

func (s *statements) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	s.n++
	return s.DB.Query(ctx, sql, args...)
}

func (s *statements) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	s.n++
	return s.DB.QueryRow(ctx, sql, args...)
}

func (s *statements) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	s.n += b.Len()
	return s.DB.SendBatch(ctx, b)
}

func (s *statements) BeginTx(ctx context.Context, opts pgx.TxOptions) (pgx.Tx, error) {
	s.tx++
	return s.DB.BeginTx(ctx, opts)
}

// TestAtkAnswerDocsRebuildSwapEmptiesSearch: a search read its
// statistics and then its candidates in two statements of one REPEATABLE
// READ transaction, each resolving rm_answer_docs by name; a rebuild's
// swap (ALTER SCHEMA ... RENAME) between them made the second read the
// new schema's tables, whose rows the first's snapshot cannot see: no
// candidates, with non-zero statistics. Candidates is now one statement
// (statistics, document frequencies, generation and candidates as CTEs),
// which resolves the schema once: asserted here by counting what it
// sends through the real pool, around a rebuild.
func TestAtkAnswerDocsRebuildSwapEmptiesSearch(t *testing.T) {
	x := newIndex(t)
	x.Add(t, answerdocstest.Doc("zorblax", "Zorblax engine", nil, "The Zorblax engine runs at 4200 rpm by default."))
	ctx := context.Background()
	db := &statements{DB: x.Pool}
	q := answerdocs.NewQueries(db)
	for i := range 2 {
		c, err := q.Candidates(ctx, []string{"zorblax", "rpm"}, 10)
		if err != nil {
			t.Fatal(err)
		}
		if c.Stats.Passages == 0 || c.Stats.DF["zorblax"] != 1 || c.Generation == 0 || len(c.Passages) != 1 || c.Passages[0].DocID != "zorblax" {
			t.Fatalf("search %d: statistics %+v generation %d candidates %v", i, c.Stats, c.Generation, c.Passages)
		}
		if db.n != i+1 || db.tx != 0 {
			t.Fatalf("search %d: Candidates sent %d statements and opened %d transactions in all; one statement a search resolves one schema", i, db.n, db.tx)
		}
		if err := x.Runner.Rebuild(ctx, answerdocs.Name, nil); err != nil {
			t.Fatal(err)
		}
	}
	c, err := q.Candidates(ctx, []string{"nothingheld"}, 10)
	if err != nil || c.Stats.Passages == 0 || len(c.Passages) != 0 || c.Generation == 0 {
		t.Fatalf("a term no passage holds: statistics %+v generation %d candidates %v, %v", c.Stats, c.Generation, c.Passages, err)
	}
}

// TestAtkAnswerDocsWideQueryUnbounded: a question within the 500
// characters answer.MaxQuestionChars allows can hold ~75 distinct words
// each held by fewer than MatchCap passages. Every one of them picked
// candidates (up to 75 × 5,000 postings read and summed before the
// LIMIT): measured by hand on arr_bench_rs_10k (186,595 passages), a
// 499-char question of 75 words of df 2,000-5,000 ran out of the 5 s
// timeout. Now at most PickTerms terms pick, the rarest, and each reads
// at most MatchCap postings. Asserted on the plan PostgreSQL executed
// (EXPLAIN ANALYZE of Candidates' statement: the postings_term scans
// run at most PickTerms times, each returning at most MatchCap rows) and
// on the candidates: passages holding only commoner terms are not
// picked; when every term is common (MatchCap 0 here), the passages
// holding the PickTerms rarest are, even without the others.
func TestAtkAnswerDocsWideQueryUnbounded(t *testing.T) {
	x := newIndex(t)
	const n = 12 // query words; word j is held by 13-j documents from j=4 on, 14-j below
	var qt []string
	for j := range n {
		qt = append(qt, word("zq", j))
	}
	var docs []answer.DocumentIndexed
	for k := range n {
		docs = append(docs, answerdocstest.Doc(fmt.Sprintf("d%02d", k), "Doc", nil, strings.Join(qt[:k+1], " ")))
	}
	docs = append(docs, answerdocstest.Doc("e", "Doc", nil, strings.Join(qt[4:], " ")),
		answerdocstest.Doc("f1", "Doc", nil, strings.Join(qt[:4], " ")), answerdocstest.Doc("f2", "Doc", nil, strings.Join(qt[:4], " ")))
	x.Add(t, docs...)
	ctx := context.Background()
	c, err := answerdocs.NewQueries(x.Pool).Candidates(ctx, qt, 300)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, p := range c.Passages {
		got[p.DocID] = true
	}
	want := []string{"d04", "d05", "d06", "d07", "d08", "d09", "d10", "d11", "e"}
	if len(got) != len(want) || len(c.Stats.DF) != n {
		t.Fatalf("a %d-word question: candidates %v (want %v, picked by the %d rarest), df of %d terms", n, got, want, answerdocs.PickTerms, len(c.Stats.DF))
	}
	for _, d := range want {
		if !got[d] {
			t.Fatalf("a %d-word question: candidates %v, want %v", n, got, want)
		}
	}
	loops, rows := postingScans(t, x, qt, answerdocs.MatchCap)
	if loops == 0 || loops > answerdocs.PickTerms || rows > loops*answerdocs.MatchCap {
		t.Fatalf("a %d-word question: postings_term scanned %d times (%d rows); at most %d terms may pick", n, loops, rows, answerdocs.PickTerms)
	}
	common := map[string]bool{}
	r, err := x.Pool.Query(ctx, answerdocs.CandidateSQL, qt, quotedTerms(qt), 0, answerdocs.PickTerms, 300)
	if err != nil {
		t.Fatal(err)
	}
	for r.Next() {
		vs, err := r.Values()
		if err != nil {
			t.Fatal(err)
		}
		if vs[7].(bool) {
			common[vs[8].(string)] = true
		}
	}
	if err := r.Err(); err != nil || len(common) != 2 || !common["d11"] || !common["e"] {
		t.Fatalf("every term common: candidates %v (want d11 and e, holding the %d rarest), %v", common, answerdocs.PickTerms, err)
	}
}

// postingScans runs EXPLAIN ANALYZE of Candidates' statement and returns
// how many times its postings_term scans ran and the rows they returned.
func postingScans(t *testing.T, x *answerdocstest.Index, qt []string, matchCap int) (loops, rows int) {
	t.Helper()
	var plan []map[string]any
	if err := x.Pool.QueryRow(context.Background(), "EXPLAIN (ANALYZE, FORMAT JSON) "+answerdocs.CandidateSQL,
		qt, quotedTerms(qt), matchCap, answerdocs.PickTerms, 300).Scan(&plan); err != nil {
		t.Fatal(err)
	}
	var walk func(n map[string]any)
	walk = func(n map[string]any) {
		if n["Index Name"] == "postings_term" {
			l, r := int(n["Actual Loops"].(float64)), int(n["Actual Rows"].(float64))
			loops, rows = loops+l, rows+l*r
		}
		subs, _ := n["Plans"].([]any)
		for _, s := range subs {
			walk(s.(map[string]any))
		}
	}
	walk(plan[0]["Plan"].(map[string]any))
	return loops, rows
}

func quotedTerms(ts []string) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = terms.Quote(t)
	}
	return out
}

// TestAnswerDocsPassagesOneStatement: Passages (the in-process index's
// load) read its generation and its passages in two statements of one
// transaction, the same split a rebuild's swap can fall into; it is one
// statement, with Candidates' generation.
func TestAnswerDocsPassagesOneStatement(t *testing.T) {
	x := newIndex(t)
	x.Add(t, answerdocstest.Doc("zorblax", "Zorblax engine", nil, "The Zorblax engine runs at 4200 rpm by default."))
	ctx := context.Background()
	if err := x.Runner.Rebuild(ctx, answerdocs.Name, nil); err != nil {
		t.Fatal(err)
	}
	db := &statements{DB: x.Pool}
	ps, gen, err := answerdocs.NewQueries(db).Passages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c, err := answerdocs.NewQueries(x.Pool).Candidates(ctx, []string{"zorblax"}, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 1 || ps[0].DocID != "zorblax" || gen == 0 || gen != c.Generation || db.n != 1 || db.tx != 0 {
		t.Fatalf("Passages: %d passages, generation %d (Candidates' %d), %d statements, %d transactions", len(ps), gen, c.Generation, db.n, db.tx)
	}
}
