package answerdocs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"encoding/json"

	"github.com/jackc/pgx/v5"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/answer"
	"github.com/arr-dev/arr/domain/answer/terms"
	"github.com/arr-dev/arr/projections"
)

// Projection is the answer service's local index as a read model: the
// latest version of every indexed document and its passages
// (answer.Passages). Its generation, the position of the latest document
// version applied, changes whenever a document does.
type Projection struct{}

// Name is the projection's name and checkpoint key.
const Name = "answer_docs"

// ddl is the read model's tables.
const ddl = `
CREATE TABLE documents (
    doc_id       text        PRIMARY KEY,
    url          text        NOT NULL,
    origin       text        NOT NULL,
    title        text        NOT NULL,
    content_hash text        NOT NULL,
    sections     json        NOT NULL,
    indexed_at   timestamptz NOT NULL,
    published    text        NOT NULL,
    position     bigint      NOT NULL
);
CREATE INDEX documents_position ON documents (position);
CREATE TABLE passages (
    doc_id   text    NOT NULL,
    seq      integer NOT NULL,
    heading  text[]  NOT NULL,
    anchor   text    NOT NULL,
    body     text    NOT NULL,
    kinds    text    NOT NULL,
    -- The passage's terms (terms.Analyze) by field, as scoring reads
    -- them (terms.Analysis.Encode), and as a tsvector (title A, heading
    -- B, body C) searched through passages_tsv.
    analysis  text[]   NOT NULL,
    tsv       tsvector NOT NULL,
    len_title integer  NOT NULL,
    len_head  integer  NOT NULL,
    len_body  integer  NOT NULL,
    PRIMARY KEY (doc_id, seq)
);
-- BM25F's corpus statistics, kept in step with passages by every flush:
-- how many passages hold each term, and the passages' count and summed
-- field lengths. A term no passage holds any more has no row (removed
-- by the flush that leaves it at 0). A change of this text rebuilds the
-- read model: titles are cut to answer.TitleMax, long sentences by bytes.
CREATE TABLE term_df (
    term text    PRIMARY KEY,
    df   integer NOT NULL
);
-- The impact-ordered postings: every term of every passage with its
-- static partial score (terms.Impact: ts_rank of the term alone), kept
-- with passages by every flush. Candidates are picked from
-- postings_term by index-only scans, no tsvector read.
CREATE TABLE postings (
    term   text    NOT NULL,
    doc_id text    NOT NULL,
    seq    integer NOT NULL,
    score  real    NOT NULL
);
CREATE TABLE corpus (
    one       boolean PRIMARY KEY DEFAULT true CHECK (one),
    passages  bigint  NOT NULL,
    sum_title bigint  NOT NULL,
    sum_head  bigint  NOT NULL,
    sum_body  bigint  NOT NULL
);
INSERT INTO corpus VALUES (true, 0, 0, 0, 0);
`

// deferredDDL is the passages' full-text index and the postings'
// indexes, built after a rebuild loads them.
const deferredDDL = `CREATE INDEX passages_tsv ON passages USING gin (tsv);
CREATE INDEX postings_term ON postings (term, score DESC) INCLUDE (doc_id, seq);
CREATE INDEX postings_doc ON postings (doc_id);`

// Spec implements projections.Projection: each document's last version
// in the batch replaces the document and its passages.
func (Projection) Spec() projections.Spec {
	return projections.Spec{Name: Name, DDL: ddl, DeferredDDL: deferredDDL, Batch: func() projections.Batch {
		b := &batch{last: map[string]int{}}
		return projections.Batch{Handlers: []projections.Handler{projections.On(b.indexed)}, Flush: b.flush}
	}}
}

// batch is the last version of each document of a batch, with its
// position.
type batch struct {
	last map[string]int
	docs []answer.DocumentIndexed
	pos  []int64
}

func (b *batch) indexed(_ context.Context, _ pgx.Tx, e projections.Event, p *answer.DocumentIndexed) error {
	d := *p
	if i, ok := b.last[d.DocID]; ok {
		b.docs[i], b.pos[i] = d, int64(e.Position)
		return nil
	}
	b.last[d.DocID] = len(b.docs)
	b.docs = append(b.docs, d)
	b.pos = append(b.pos, int64(e.Position))
	return nil
}

// flush replaces the batch's documents and their passages, and moves
// the corpus statistics by the passages dropped and added.
func (b *batch) flush(ctx context.Context, tx pgx.Tx) error {
	if len(b.docs) == 0 {
		return nil
	}
	return Store(ctx, tx, b.docs, b.pos)
}

// Store writes docs (each the last version of its document, at pos) into
// the read model tx's search_path names, replacing their earlier versions
// and moving term_df and corpus with the passages: the projection's
// write, exported for tools that load the read model without a log
// (scripts/bench). docs must not repeat a doc_id.
//
// Every row is built (each title cut to answer.IndexTitle and analysed
// once per document) before the first statement, so the transaction
// never idles through a document's analysis.
func Store(ctx context.Context, tx pgx.Tx, docs []answer.DocumentIndexed, pos []int64) error {
	ids := make([]string, len(docs))
	var rows, posts [][]any
	for i := range docs {
		d := &docs[i]
		ids[i] = d.DocID
		d.Title = answer.IndexTitle(d.Title)
		title := terms.Split(d.Title)
		for _, p := range answer.Passages(*d) {
			row, a := passageRow(p, title)
			rows = append(rows, row)
			for _, im := range a.Impacts() {
				posts = append(posts, []any{im.Term, p.DocID, p.Seq, im.Score})
			}
		}
	}
	for i, d := range docs {
		if err := storeDocument(ctx, tx, d, pos[i]); err != nil {
			return err
		}
	}
	zero, err := dropPassages(ctx, tx, ids)
	if err != nil {
		return err
	}
	if err := addPassages(ctx, tx, ids, rows); err != nil {
		return err
	}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"postings"}, []string{"term", "doc_id", "seq", "score"}, pgx.CopyFromRows(posts)); err != nil {
		return fmt.Errorf("storing postings: %w", err)
	}
	// A term the old passages held and the new ones do not is no row.
	if _, err := tx.Exec(ctx, `DELETE FROM term_df WHERE term = ANY($1) AND df <= 0`, zero); err != nil {
		return fmt.Errorf("removing terms no passage holds: %w", err)
	}
	return nil
}

func storeDocument(ctx context.Context, tx pgx.Tx, d answer.DocumentIndexed, pos int64) error {
	sections, err := json.Marshal(d.Sections)
	if err != nil {
		return fmt.Errorf("document %s: %w", d.DocID, err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO documents (doc_id, url, origin, title, content_hash, sections, indexed_at, published, position)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (doc_id) DO UPDATE SET url = EXCLUDED.url, origin = EXCLUDED.origin, title = EXCLUDED.title,
			content_hash = EXCLUDED.content_hash, sections = EXCLUDED.sections, indexed_at = EXCLUDED.indexed_at,
			published = EXCLUDED.published, position = EXCLUDED.position`,
		d.DocID, d.URL, d.Origin, d.Title, d.ContentHash, string(sections), d.IndexedAt, d.Published, pos); err != nil {
		return fmt.Errorf("storing document %s: %w", d.DocID, err)
	}
	return nil
}

// passageRow is p's row of passages_in (its columns, its tsvector as a
// literal and its field lengths) and its analysis.
func passageRow(p answer.Passage, title []string) ([]any, terms.Analysis) {
	heading := p.Heading
	if heading == nil {
		heading = []string{}
	}
	a := terms.AnalyzeTitled(p, title)
	return []any{p.DocID, p.Seq, heading, p.Anchor, p.Text, p.Kinds, a.Encode(), a.TSVector(), len(a.Title), len(a.Head), len(a.Body)}, a
}

// dropPassages deletes the passages of ids and takes them out of the
// corpus statistics, returning the terms they left at df 0.
func dropPassages(ctx context.Context, tx pgx.Tx, ids []string) ([]string, error) {
	rows, err := tx.Query(ctx, `UPDATE term_df t SET df = t.df - o.n
		FROM (SELECT lex, count(*) AS n FROM passages, unnest(tsvector_to_array(tsv)) AS lex WHERE doc_id = ANY($1) GROUP BY lex) o
		WHERE t.term = o.lex RETURNING CASE WHEN t.df <= 0 THEN t.term END`, ids)
	if err != nil {
		return nil, fmt.Errorf("counting out old passages' terms: %w", err)
	}
	var zero []string
	all, err := pgx.CollectRows(rows, pgx.RowTo[*string])
	if err != nil {
		return nil, fmt.Errorf("counting out old passages' terms: %w", err)
	}
	for _, t := range all {
		if t != nil {
			zero = append(zero, *t)
		}
	}
	return zero, removePassages(ctx, tx, ids)
}

// removePassages deletes the passages of ids and takes them out of the
// corpus counts.
func removePassages(ctx context.Context, tx pgx.Tx, ids []string) error {
	if _, err := tx.Exec(ctx, `UPDATE corpus SET passages = corpus.passages - o.n, sum_title = corpus.sum_title - o.t,
			sum_head = corpus.sum_head - o.h, sum_body = corpus.sum_body - o.b
		FROM (SELECT count(*) AS n, coalesce(sum(len_title), 0) AS t, coalesce(sum(len_head), 0) AS h, coalesce(sum(len_body), 0) AS b
			FROM passages WHERE doc_id = ANY($1)) o`, ids); err != nil {
		return fmt.Errorf("counting out old passages: %w", err)
	}
	if _, err := tx.Exec(ctx, `DELETE FROM passages WHERE doc_id = ANY($1)`, ids); err != nil {
		return fmt.Errorf("dropping old passages: %w", err)
	}
	if _, err := tx.Exec(ctx, `DELETE FROM postings WHERE doc_id = ANY($1)`, ids); err != nil {
		return fmt.Errorf("dropping old postings: %w", err)
	}
	return nil
}

// addPassages stores rows (through passages_in, whose tsv is text: the
// copy protocol has no tsvector codec) and counts them into the corpus
// statistics.
func addPassages(ctx context.Context, tx pgx.Tx, ids []string, rows [][]any) error {
	if _, err := tx.Exec(ctx, `CREATE TEMPORARY TABLE IF NOT EXISTS passages_in (doc_id text, seq integer, heading text[], anchor text,
			body text, kinds text, analysis text[], tsv text, len_title integer, len_head integer, len_body integer) ON COMMIT DROP;
		TRUNCATE passages_in`); err != nil {
		return fmt.Errorf("staging passages: %w", err)
	}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"passages_in"},
		[]string{"doc_id", "seq", "heading", "anchor", "body", "kinds", "analysis", "tsv", "len_title", "len_head", "len_body"}, pgx.CopyFromRows(rows)); err != nil {
		return fmt.Errorf("staging passages: %w", err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO passages (doc_id, seq, heading, anchor, body, kinds, analysis, tsv, len_title, len_head, len_body)
		SELECT doc_id, seq, heading, anchor, body, kinds, analysis, tsv::tsvector, len_title, len_head, len_body FROM pg_temp.passages_in`); err != nil {
		return fmt.Errorf("storing passages: %w", err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO term_df (term, df)
		SELECT lex, count(*) FROM passages, unnest(tsvector_to_array(tsv)) AS lex WHERE doc_id = ANY($1) GROUP BY lex
		ON CONFLICT (term) DO UPDATE SET df = term_df.df + EXCLUDED.df`, ids); err != nil {
		return fmt.Errorf("counting in new passages' terms: %w", err)
	}
	if _, err := tx.Exec(ctx, `UPDATE corpus SET passages = corpus.passages + o.n, sum_title = corpus.sum_title + o.t,
			sum_head = corpus.sum_head + o.h, sum_body = corpus.sum_body + o.b
		FROM (SELECT count(*) AS n, coalesce(sum(len_title), 0) AS t, coalesce(sum(len_head), 0) AS h, coalesce(sum(len_body), 0) AS b
			FROM passages WHERE doc_id = ANY($1)) o`, ids); err != nil {
		return fmt.Errorf("counting in new passages: %w", err)
	}
	return nil
}

// IndexedDoc is a document of the local index with its passages' source.
type IndexedDoc struct {
	DocID     string           `json:"doc_id"`
	URL       string           `json:"url"`
	Origin    string           `json:"origin"`
	Title     string           `json:"title"`
	Sections  []answer.Section `json:"sections"`
	IndexedAt time.Time        `json:"indexed_at"`
}

// Queries reads the local index read model. Safe for concurrent
// use.
type Queries struct{ pool projections.DB }

// NewQueries returns the queries over pool.
func NewQueries(pool projections.DB) *Queries { return &Queries{pool: pool} }

// Generation is the position of the latest document version the read
// model holds (0 when it holds none): one index probe.
func (q *Queries) Generation(ctx context.Context) (uint64, error) {
	var g int64
	if err := q.pool.QueryRow(ctx, `SELECT coalesce(max(position), 0) FROM rm_answer_docs.documents`).Scan(&g); err != nil {
		return 0, fmt.Errorf("reading the local index generation: %w", err)
	}
	return uint64(g), nil
}

// Count is how many documents the local index holds.
func (q *Queries) Count(ctx context.Context) (int64, error) {
	var n int64
	if err := q.pool.QueryRow(ctx, `SELECT count(*) FROM rm_answer_docs.documents`).Scan(&n); err != nil {
		return 0, fmt.Errorf("counting the local index's documents: %w", err)
	}
	return n, nil
}

// Passages returns every passage with its document's title, URL and date, and
// the generation they belong to, read in one statement (so one snapshot
// and one set of tables, whatever a rebuild swaps in meanwhile); with no
// passage, the generation is 0.
func (q *Queries) Passages(ctx context.Context) ([]answer.IndexedPassage, uint64, error) {
	rows, err := q.pool.Query(ctx, `SELECT p.doc_id, p.seq, p.heading, p.anchor, p.body, p.kinds, d.title, d.url, d.published,
			(SELECT max(position) FROM rm_answer_docs.documents)
		FROM rm_answer_docs.passages p JOIN rm_answer_docs.documents d USING (doc_id) ORDER BY p.doc_id, p.seq`)
	if err != nil {
		return nil, 0, fmt.Errorf("reading the local index: %w", err)
	}
	var gen int64
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (answer.IndexedPassage, error) {
		var p answer.IndexedPassage
		err := r.Scan(&p.DocID, &p.Seq, &p.Heading, &p.Anchor, &p.Text, &p.Kinds, &p.Title, &p.URL, &p.Published, &gen)
		p.ID = answer.PassageID(p.DocID, p.Seq)
		return p, err
	})
	if err != nil {
		return nil, 0, fmt.Errorf("reading the local index: %w", err)
	}
	return out, uint64(gen), nil
}

// Document returns one document by id.
func (q *Queries) Document(ctx context.Context, docID string) (IndexedDoc, error) {
	var d IndexedDoc
	var sections []byte
	err := q.pool.QueryRow(ctx, `SELECT doc_id, url, origin, title, sections::text, indexed_at FROM rm_answer_docs.documents WHERE doc_id = $1`, docID).
		Scan(&d.DocID, &d.URL, &d.Origin, &d.Title, &sections, &d.IndexedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return d, domain.NotFound("document_not_found", "no indexed document %s", docID)
	}
	if err != nil {
		return d, fmt.Errorf("reading document %s: %w", docID, err)
	}
	if err := json.Unmarshal(sections, &d.Sections); err != nil {
		return d, fmt.Errorf("reading document %s: %w", docID, err)
	}
	d.IndexedAt = d.IndexedAt.UTC()
	return d, nil
}
