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
    PRIMARY KEY (doc_id, seq)
);
`

// Spec implements projections.Projection: each document's last version
// in the batch replaces the document and its passages.
func (Projection) Spec() projections.Spec {
	return projections.Spec{Name: Name, DDL: ddl, Batch: func() projections.Batch {
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

// flush replaces the batch's documents and their passages.
func (b *batch) flush(ctx context.Context, tx pgx.Tx) error {
	docs, pos := b.docs, b.pos
	if len(docs) == 0 {
		return nil
	}
	ids := make([]string, len(docs))
	var rows [][]any
	for i, d := range docs {
		ids[i] = d.DocID
		sections, err := json.Marshal(d.Sections)
		if err != nil {
			return fmt.Errorf("document %s: %w", d.DocID, err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO documents (doc_id, url, origin, title, content_hash, sections, indexed_at, published, position)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
			ON CONFLICT (doc_id) DO UPDATE SET url = EXCLUDED.url, origin = EXCLUDED.origin, title = EXCLUDED.title,
				content_hash = EXCLUDED.content_hash, sections = EXCLUDED.sections, indexed_at = EXCLUDED.indexed_at,
				published = EXCLUDED.published, position = EXCLUDED.position`,
			d.DocID, d.URL, d.Origin, d.Title, d.ContentHash, string(sections), d.IndexedAt, d.Published, pos[i]); err != nil {
			return fmt.Errorf("storing document %s: %w", d.DocID, err)
		}
		for _, p := range answer.Passages(d) {
			heading := p.Heading
			if heading == nil {
				heading = []string{}
			}
			rows = append(rows, []any{p.DocID, p.Seq, heading, p.Anchor, p.Text, p.Kinds})
		}
	}
	if _, err := tx.Exec(ctx, `DELETE FROM passages WHERE doc_id = ANY($1)`, ids); err != nil {
		return fmt.Errorf("dropping old passages: %w", err)
	}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"passages"}, []string{"doc_id", "seq", "heading", "anchor", "body", "kinds"}, pgx.CopyFromRows(rows)); err != nil {
		return fmt.Errorf("storing passages: %w", err)
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
// the generation they belong to, read in one snapshot.
func (q *Queries) Passages(ctx context.Context) ([]answer.IndexedPassage, uint64, error) {
	tx, err := q.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, 0, fmt.Errorf("reading the local index: %w", err)
	}
	defer tx.Rollback(context.Background()) //nolint:errcheck
	var gen int64
	if err := tx.QueryRow(ctx, `SELECT coalesce(max(position), 0) FROM rm_answer_docs.documents`).Scan(&gen); err != nil {
		return nil, 0, fmt.Errorf("reading the local index: %w", err)
	}
	rows, err := tx.Query(ctx, `SELECT p.doc_id, p.seq, p.heading, p.anchor, p.body, p.kinds, d.title, d.url, d.published
		FROM rm_answer_docs.passages p JOIN rm_answer_docs.documents d USING (doc_id) ORDER BY p.doc_id, p.seq`)
	if err != nil {
		return nil, 0, fmt.Errorf("reading the local index: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (answer.IndexedPassage, error) {
		var p answer.IndexedPassage
		err := r.Scan(&p.DocID, &p.Seq, &p.Heading, &p.Anchor, &p.Text, &p.Kinds, &p.Title, &p.URL, &p.Published)
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
