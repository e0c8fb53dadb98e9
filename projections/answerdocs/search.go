package answerdocs

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/arr-dev/arr/domain/answer"
	"github.com/arr-dev/arr/domain/answer/terms"
)

// MatchCap is the document frequency above which a query term only
// scores candidates and does not pick them: a passage is a candidate
// when it holds one of the query's rarer terms (or, when every term is
// commoner than this, all of the picking ones), so a question of common
// words reads a bounded part of the GIN index. It is also the most
// postings read per picking term.
const MatchCap = 5000

// PickTerms is the most query terms that pick candidates: the rarest
// (lowest document frequency, highest IDF) of the question, so a search
// reads at most PickTerms × MatchCap postings whatever its length. BM25F
// still scores the candidates with every term.
const PickTerms = 8

// candidateSQL is Candidates' one statement: the corpus statistics, the
// document frequency of the query's terms ($1, quoted as tsquery
// lexemes in $2), the generation and the best $5 candidates, so that
// one statement resolves rm_answer_docs once (a rebuild's schema swap
// between two statements would leave the second reading tables the
// first's snapshot cannot see). Candidates are the passages holding one
// of the PickTerms ($4) rarest terms held by at most MatchCap ($3)
// passages, from their impact-ordered postings (index-only scans of
// postings_term, at most $3 rows per term), by the sum of each term's IDF
// times its stored score; when every term is commoner, the passages
// holding all of the $4 rarest from the GIN index, by IDF times ts_rank.
// A search with no candidate still returns one row, the statistics.
const candidateSQL = `WITH st AS (SELECT c.passages, c.sum_title, c.sum_head, c.sum_body,
		(SELECT coalesce(max(position), 0) FROM rm_answer_docs.documents) AS gen FROM rm_answer_docs.corpus c),
	w AS (SELECT q.term, q.lexeme, d.df::bigint AS df,
		ln(1::float8 + (st.passages::float8 - d.df::float8 + 0.5::float8) / (d.df::float8 + 0.5::float8)) AS idf
		FROM unnest($1::text[], $2::text[]) AS q(term, lexeme)
		JOIN rm_answer_docs.term_df d ON d.term = q.term AND d.df > 0 CROSS JOIN st),
	pick AS (SELECT term, idf FROM w WHERE df <= $3 ORDER BY df, term LIMIT $4),
	common AS (SELECT lexeme, idf FROM w WHERE NOT EXISTS (SELECT 1 FROM pick) ORDER BY df, term LIMIT $4),
	rare AS (SELECT o.doc_id, o.seq, sum(pick.idf * o.score) AS score FROM pick
		CROSS JOIN LATERAL (SELECT doc_id, seq, score FROM rm_answer_docs.postings
			WHERE term = pick.term ORDER BY score DESC LIMIT $3) o
		GROUP BY o.doc_id, o.seq ORDER BY score DESC, o.doc_id, o.seq LIMIT $5),
	gin AS (SELECT p.doc_id, p.seq,
			(SELECT sum(m.idf * ts_rank('` + terms.RankWeights + `', p.tsv, m.lexeme::tsquery)) FROM common m) AS score
		FROM rm_answer_docs.passages p
		WHERE EXISTS (SELECT 1 FROM common) AND p.tsv @@ (SELECT string_agg(lexeme, ' & ')::tsquery FROM common)
		ORDER BY score DESC, p.doc_id, p.seq LIMIT $5),
	c AS (SELECT * FROM rare UNION ALL SELECT * FROM gin),
	r AS (SELECT c.score, p.doc_id, p.seq, p.heading, p.anchor, p.body, p.kinds, d.title, d.url, d.published, p.analysis
		FROM c JOIN rm_answer_docs.passages p USING (doc_id, seq) JOIN rm_answer_docs.documents d USING (doc_id))
SELECT st.passages, st.sum_title, st.sum_head, st.sum_body, st.gen,
	(SELECT coalesce(array_agg(term), '{}') FROM w), (SELECT coalesce(array_agg(df), '{}') FROM w),
	r.doc_id IS NOT NULL, coalesce(r.doc_id, ''), coalesce(r.seq, 0), coalesce(r.heading, '{}'), coalesce(r.anchor, ''),
	coalesce(r.body, ''), coalesce(r.kinds, ''), coalesce(r.title, ''), coalesce(r.url, ''), coalesce(r.published, ''),
	coalesce(r.analysis, '{}')
FROM st LEFT JOIN r ON true
ORDER BY r.score DESC, r.doc_id, r.seq`

// Candidates returns the best limit passages holding the query terms qt
// (terms.Split's, unique), with the corpus statistics of the same
// snapshot, in one statement (candidateSQL): the candidates BM25F then
// ranks (research.Stored).
func (q *Queries) Candidates(ctx context.Context, qt []string, limit int) (terms.Candidates, error) {
	c := terms.Candidates{Stats: terms.Stats{DF: map[string]int64{}}}
	rows, err := q.pool.Query(ctx, candidateSQL, qt, quoted(qt), MatchCap, PickTerms, limit)
	if err != nil {
		return c, fmt.Errorf("searching the local index: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := scanCandidate(rows, &c); err != nil {
			return c, fmt.Errorf("searching the local index: %w", err)
		}
	}
	if err := rows.Err(); err != nil {
		return c, fmt.Errorf("searching the local index: %w", err)
	}
	return c, nil
}

// scanCandidate reads one row of candidateSQL into c: the statistics
// (the same on every row) and the passage, when the row has one.
func scanCandidate(rows pgx.Rows, c *terms.Candidates) error {
	var p answer.IndexedPassage
	var gen int64
	var ts, a []string
	var dfs []int64
	var has bool
	s := &c.Stats
	if err := rows.Scan(&s.Passages, &s.SumTitle, &s.SumHead, &s.SumBody, &gen, &ts, &dfs,
		&has, &p.DocID, &p.Seq, &p.Heading, &p.Anchor, &p.Text, &p.Kinds, &p.Title, &p.URL, &p.Published, &a); err != nil {
		return err
	}
	c.Generation = uint64(gen)
	for i, t := range ts {
		s.DF[t] = dfs[i]
	}
	if !has {
		return nil
	}
	p.ID = answer.PassageID(p.DocID, p.Seq)
	an, ok := terms.Decode(a)
	if !ok {
		return fmt.Errorf("passage %s: a malformed analysis", p.ID)
	}
	c.Passages = append(c.Passages, p)
	c.Analyses = append(c.Analyses, an)
	return nil
}

func quoted(ts []string) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = terms.Quote(t)
	}
	return out
}
