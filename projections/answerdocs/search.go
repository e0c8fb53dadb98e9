package answerdocs

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/arr-dev/arr/domain/answer"
	"github.com/arr-dev/arr/domain/answer/terms"
)

// MatchCap is the document frequency above which a query term only
// scores candidates and does not pick them: a passage is a candidate
// when it holds one of the query's rarer terms (or, when every term is
// commoner than this, all of them), so a question of common words reads
// a bounded part of the GIN index.
const MatchCap = 5000

// Candidates returns the best limit passages holding the query terms qt
// (terms.Split's, unique), picked from the passages' GIN index and
// ordered by each picking term's IDF times PostgreSQL's ts_rank of it
// (field weights title 0.75, heading 1, body 0.5), with the corpus statistics of
// the same snapshot: the candidates BM25F then ranks (research.Stored).
func (q *Queries) Candidates(ctx context.Context, qt []string, limit int) (terms.Candidates, error) {
	var c terms.Candidates
	tx, err := q.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return c, fmt.Errorf("searching the local index: %w", err)
	}
	defer tx.Rollback(context.Background()) //nolint:errcheck
	if c.Stats, c.Generation, err = stats(ctx, tx, qt); err != nil {
		return c, err
	}
	sql, args := candidateQuery(qt, c.Stats, limit)
	if sql == "" {
		return c, nil
	}
	rows, err := tx.Query(ctx, sql, args...)
	if err != nil {
		return c, fmt.Errorf("searching the local index: %w", err)
	}
	c.Passages, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (answer.IndexedPassage, error) {
		var p answer.IndexedPassage
		var a []string
		err := r.Scan(&p.DocID, &p.Seq, &p.Heading, &p.Anchor, &p.Text, &p.Kinds, &p.Title, &p.URL, &p.Published, &a)
		p.ID = answer.PassageID(p.DocID, p.Seq)
		an, ok := terms.Decode(a)
		if err == nil && !ok {
			err = fmt.Errorf("passage %s: a malformed analysis", p.ID)
		}
		c.Analyses = append(c.Analyses, an)
		return p, err
	})
	if err != nil {
		return c, fmt.Errorf("searching the local index: %w", err)
	}
	return c, nil
}

// stats reads the corpus statistics, the document frequency of qt and
// the generation, in one statement.
func stats(ctx context.Context, tx pgx.Tx, qt []string) (terms.Stats, uint64, error) {
	s := terms.Stats{DF: map[string]int64{}}
	var gen int64
	var ts []string
	var dfs []int64
	if err := tx.QueryRow(ctx, `SELECT c.passages, c.sum_title, c.sum_head, c.sum_body,
			(SELECT coalesce(max(position), 0) FROM rm_answer_docs.documents), coalesce(t.terms, '{}'), coalesce(t.dfs, '{}')
		FROM rm_answer_docs.corpus c LEFT JOIN LATERAL (SELECT array_agg(term) AS terms, array_agg(df::bigint) AS dfs
			FROM rm_answer_docs.term_df WHERE term = ANY($1) AND df > 0) t ON true`, qt).
		Scan(&s.Passages, &s.SumTitle, &s.SumHead, &s.SumBody, &gen, &ts, &dfs); err != nil {
		return s, 0, fmt.Errorf("reading the local index's statistics: %w", err)
	}
	for i, t := range ts {
		s.DF[t] = dfs[i]
	}
	return s, uint64(gen), nil
}

// candidateQuery is the SQL of Candidates and its arguments, or "" when
// no query term is in the index: the postings of the rare terms, or,
// when every term is common, the passages holding all of them from the
// GIN index.
func candidateQuery(qt []string, s terms.Stats, limit int) (string, []any) {
	var present, rare []string
	for _, t := range qt {
		if df := s.DF[t]; df > 0 {
			present = append(present, t)
			if df <= MatchCap {
				rare = append(rare, t)
			}
		}
	}
	if len(present) == 0 {
		return "", nil
	}
	if len(rare) > 0 {
		return postingsQuery(rare, s, limit)
	}
	args := []any{strings.Join(quoted(present), " & "), limit}
	var score []string
	for _, t := range present {
		args = append(args, idf(s, t), terms.Quote(t))
		score = append(score, "$"+strconv.Itoa(len(args)-1)+"::float8 * ts_rank('"+terms.RankWeights+"', tsv, $"+strconv.Itoa(len(args))+"::tsquery)")
	}
	return `SELECT p.doc_id, p.seq, p.heading, p.anchor, p.body, p.kinds, d.title, d.url, d.published, p.analysis
		FROM (SELECT doc_id, seq, ` + strings.Join(score, " + ") + ` AS score FROM rm_answer_docs.passages
			WHERE tsv @@ $1::tsquery ORDER BY score DESC, doc_id, seq LIMIT $2) c
		JOIN rm_answer_docs.passages p USING (doc_id, seq) JOIN rm_answer_docs.documents d USING (doc_id)
		ORDER BY c.score DESC, p.doc_id, p.seq`, args
}

// postingsQuery picks the candidates of the rare terms (each held by at
// most MatchCap passages) from their impact-ordered postings, by
// index-only scans of postings_term: the passages holding one of them,
// by the sum of each term's IDF times its stored score (ts_rank of the
// term alone, so the order the tsvector query gave), and reads the rows
// of the limit best alone.
func postingsQuery(rare []string, s terms.Stats, limit int) (string, []any) {
	idfs := make([]float64, len(rare))
	for i, t := range rare {
		idfs[i] = idf(s, t)
	}
	return `SELECT p.doc_id, p.seq, p.heading, p.anchor, p.body, p.kinds, d.title, d.url, d.published, p.analysis
		FROM (SELECT o.doc_id, o.seq, sum(w.idf * o.score) AS score
			FROM unnest($1::text[], $2::float8[]) AS w(term, idf)
			CROSS JOIN LATERAL (SELECT doc_id, seq, score FROM rm_answer_docs.postings WHERE term = w.term) o
			GROUP BY o.doc_id, o.seq ORDER BY score DESC, o.doc_id, o.seq LIMIT $3) c
		JOIN rm_answer_docs.passages p USING (doc_id, seq) JOIN rm_answer_docs.documents d USING (doc_id)
		ORDER BY c.score DESC, p.doc_id, p.seq`, []any{rare, idfs, limit}
}

// idf is BM25's inverse document frequency of t in s.
func idf(s terms.Stats, t string) float64 {
	n, df := float64(s.Passages), float64(s.DF[t])
	return math.Log(1 + (n-df+0.5)/(df+0.5))
}

func quoted(ts []string) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = terms.Quote(t)
	}
	return out
}
