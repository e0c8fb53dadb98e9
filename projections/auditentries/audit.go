package auditentries

import (
	"context"
	"errors"
	"fmt"
	"time"

	"encoding/json"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/audit"
	"github.com/arr-dev/arr/projections"
)

// Projection is the read model of the audit chain: one row per
// CompletionRecorded with its chain context, and whether it verified when
// it was projected (its link to the entry before it and its own hash).
// It answers GET /v1/audit/{hash} and the ownership check of feedback.
type Projection struct{}

// Name is the audit projection's name and checkpoint key.
const Name = "audit"

// ddl is the read model's tables.
const ddl = `
CREATE TABLE entries (
    seq         bigint      PRIMARY KEY,
    hash        text        COLLATE "C" NOT NULL,
    prev_hash   text        COLLATE "C" NOT NULL,
    position    bigint      NOT NULL,
    payload     json        NOT NULL,
    link        smallint    NOT NULL,
    account_id  uuid        NOT NULL,
    verified    boolean     NOT NULL,
    problem     text        NOT NULL DEFAULT '',
    recorded_at timestamptz NOT NULL
);
`

// deferredDDL is the read model's secondary indexes.
const deferredDDL = `CREATE UNIQUE INDEX entries_hash ON entries (hash);`

// Spec implements projections.Projection: entries are verified in order against the
// one before them and inserted in one statement.
func (Projection) Spec() projections.Spec {
	return projections.Spec{Name: Name, DDL: ddl, DeferredDDL: deferredDDL, Batch: newBatch}
}

// newBatch begins a batch: its handler gathers, its flush writes.
func newBatch() projections.Batch {
	var seqs, positions []int64
	var links []int16
	var hashes, prevs, payloads, problems []string
	var accounts []uuid.UUID
	var verified []bool
	var at []time.Time
	prevHash, prevSeq, havePrev := "", int64(0), false
	add := func(ctx context.Context, tx pgx.Tx, e projections.Event, p *audit.CompletionRecorded) error {
		r := *p
		if !havePrev || prevSeq != int64(r.Seq)-1 {
			var err error
			if prevHash, err = hashBefore(ctx, tx, r.Seq); err != nil {
				return err
			}
		}
		problem := ""
		if err := audit.Verify(&r, prevHash, r.Seq); err != nil {
			problem = err.Error()
		}
		c, err := r.DecodePayload()
		if err != nil {
			return fmt.Errorf("event %d: %w", e.Position, err)
		}
		seqs, positions = append(seqs, int64(r.Seq)), append(positions, int64(e.Position))
		links = append(links, int16(r.LinkAlgorithm()))
		hashes, prevs, payloads = append(hashes, r.Hash), append(prevs, r.PrevHash), append(payloads, string(r.Payload))
		accounts, verified, problems = append(accounts, c.AccountID), append(verified, problem == ""), append(problems, problem)
		at = append(at, e.RecordedAt)
		prevHash, prevSeq, havePrev = r.Hash, int64(r.Seq), true
		return nil
	}
	flush := func(ctx context.Context, tx pgx.Tx) error {
		if len(seqs) == 0 {
			return nil
		}
		_, err := tx.Exec(ctx, `INSERT INTO entries (seq, hash, prev_hash, position, payload, link, account_id, verified, problem, recorded_at)
			SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::bigint[], $5::json[], $6::smallint[], $7::uuid[], $8::bool[], $9::text[], $10::timestamptz[])`,
			seqs, hashes, prevs, positions, payloads, links, accounts, verified, problems, at)
		if err != nil {
			return fmt.Errorf("inserting audit entries: %w", err)
		}
		return nil
	}
	return projections.Batch{Handlers: []projections.Handler{projections.On(add)}, Flush: flush}
}

// hashBefore is the hash of entry seq-1 (Genesis for seq 0; "" when it is
// missing, which fails the link check).
func hashBefore(ctx context.Context, tx pgx.Tx, seq uint64) (string, error) {
	if seq == 0 {
		return audit.Genesis, nil
	}
	var h string
	err := tx.QueryRow(ctx, `SELECT hash FROM entries WHERE seq = $1`, int64(seq)-1).Scan(&h)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("reading audit entry %d: %w", seq-1, err)
	}
	return h, nil
}

// AuditEntry is one entry of the chain with its context. Payload and
// Completion are the account's own (the HTTP layer decides who sees them);
// the rest is the chain's public part.
type AuditEntry struct {
	Seq        uint64           `json:"seq"`
	Hash       string           `json:"hash"`
	PrevHash   string           `json:"prev_hash"`
	Position   uint64           `json:"position"`
	Payload    json.RawMessage  `json:"payload"`
	Completion audit.Completion `json:"-"`
	// Link is the entry's link algorithm (audit.LinkV1 or audit.LinkV2).
	Link int `json:"link"`
	// PayloadSHA256 is audit.PayloadSHA256 of Payload.
	PayloadSHA256 string    `json:"payload_sha256"`
	Verified      bool      `json:"verified"`
	Problem       string    `json:"problem,omitempty"`
	RecordedAt    time.Time `json:"recorded_at"`
	// NextHash is the hash of the entry after it, if any.
	NextHash string `json:"next_hash,omitempty"`
}

// Queries reads the audit read model. Safe for concurrent use.
type Queries struct{ pool projections.DB }

// NewQueries returns the queries over the audit read model.
func NewQueries(pool projections.DB) *Queries { return &Queries{pool: pool} }

// Get returns the entry with this hash, or ErrNotFound.
func (q *Queries) Get(ctx context.Context, hash string) (AuditEntry, error) {
	var e AuditEntry
	var seq, pos int64
	var link int16
	var payload []byte
	var next *string
	err := q.pool.QueryRow(ctx, `SELECT e.seq, e.hash, e.prev_hash, e.position, e.payload::text, e.link, e.verified, e.problem, e.recorded_at,
			(SELECT n.hash FROM rm_audit.entries n WHERE n.seq = e.seq + 1)
		FROM rm_audit.entries e WHERE e.hash = $1`, hash).
		Scan(&seq, &e.Hash, &e.PrevHash, &pos, &payload, &link, &e.Verified, &e.Problem, &e.RecordedAt, &next)
	if errors.Is(err, pgx.ErrNoRows) {
		return e, domain.NotFound("audit_entry_not_found", "no audit entry has the hash %s", hash)
	}
	if err != nil {
		return e, fmt.Errorf("reading audit entry: %w", err)
	}
	e.Seq, e.Position, e.Payload, e.RecordedAt = uint64(seq), uint64(pos), payload, e.RecordedAt.UTC()
	e.Link, e.PayloadSHA256 = int(link), audit.PayloadSHA256(payload)
	if next != nil {
		e.NextHash = *next
	}
	if err := json.Unmarshal(payload, &e.Completion); err != nil {
		return e, fmt.Errorf("decoding audit entry %d: %w", seq, err)
	}
	return e, nil
}

// Stats returns the number of entries and the head's hash.
func (q *Queries) Stats(ctx context.Context) (int64, string, error) {
	var n int64
	var head *string
	err := q.pool.QueryRow(ctx, `SELECT count(*), (SELECT hash FROM rm_audit.entries ORDER BY seq DESC LIMIT 1) FROM rm_audit.entries`).Scan(&n, &head)
	if err != nil {
		return 0, "", fmt.Errorf("reading audit stats: %w", err)
	}
	if head == nil {
		return n, "", nil
	}
	return n, *head, nil
}
