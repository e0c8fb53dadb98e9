package answercache

import (
	"context"
	"errors"
	"fmt"
	"time"

	"encoding/json"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/arr-dev/arr/domain/answer"
	"github.com/arr-dev/arr/projections"
)

// Projection is the answer service's cache: per cache key (normalized
// question, tier and mode) the latest AnswerSynthesized, served while
// expires_at (synthesized_at plus the event's validity) lies ahead.
type Projection struct{}

// Name is the projection's name and checkpoint key.
const Name = "answer_cache"

// ddl is the read model's tables.
const ddl = `
CREATE TABLE answers (
    cache_key      text        PRIMARY KEY,
    answer_id      uuid        NOT NULL,
    question       text        NOT NULL,
    normalized     text        NOT NULL,
    tier           text        NOT NULL,
    mode           text        NOT NULL,
    answer         text        NOT NULL,
    sources        json        NOT NULL,
    synthesis      text        NOT NULL,
    answer_found   boolean     NOT NULL,
    model          text        NOT NULL,
    sub_questions  json        NOT NULL,
    backend        text        NOT NULL,
    costs          json        NOT NULL,
    synthesized_at timestamptz NOT NULL,
    expires_at     timestamptz NOT NULL,
    position       bigint      NOT NULL
);
`

// Spec implements projections.Projection: the last synthesis of a key in
// the batch replaces what the table holds.
func (Projection) Spec() projections.Spec {
	return projections.Spec{Name: Name, DDL: ddl, Batch: func() projections.Batch {
		b := &batch{last: map[string]int{}}
		return projections.Batch{Handlers: []projections.Handler{projections.On(b.synthesized)}, Flush: b.flush}
	}}
}

// batch is the last synthesis of each key of a batch, with its position.
type batch struct {
	last    map[string]int
	decoded []answer.AnswerSynthesized
	pos     []int64
}

func (b *batch) synthesized(_ context.Context, _ pgx.Tx, e projections.Event, p *answer.AnswerSynthesized) error {
	v := *p
	if i, ok := b.last[v.CacheKey]; ok {
		b.decoded[i], b.pos[i] = v, int64(e.Position)
		return nil
	}
	b.last[v.CacheKey] = len(b.decoded)
	b.decoded = append(b.decoded, v)
	b.pos = append(b.pos, int64(e.Position))
	return nil
}

// flush upserts the batch's syntheses.
func (b *batch) flush(ctx context.Context, tx pgx.Tx) error {
	decoded, pos := b.decoded, b.pos
	if len(decoded) == 0 {
		return nil
	}
	q := &pgx.Batch{}
	for i, v := range decoded {
		sources, _ := json.Marshal(v.Sources)
		subs, _ := json.Marshal(v.SubQuestions)
		costs, _ := json.Marshal(v.Costs)
		if v.Sources == nil {
			sources = []byte("[]")
		}
		if v.SubQuestions == nil {
			subs = []byte("[]")
		}
		q.Queue(`INSERT INTO answers AS a (cache_key, answer_id, question, normalized, tier, mode, answer, sources, synthesis, model, sub_questions, backend, costs, synthesized_at, expires_at, position, answer_found)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)
			ON CONFLICT (cache_key) DO UPDATE SET answer_id = excluded.answer_id, question = excluded.question, normalized = excluded.normalized,
			  tier = excluded.tier, mode = excluded.mode, answer = excluded.answer, sources = excluded.sources, synthesis = excluded.synthesis,
			  model = excluded.model, sub_questions = excluded.sub_questions, backend = excluded.backend, costs = excluded.costs,
			  synthesized_at = excluded.synthesized_at, expires_at = excluded.expires_at, position = excluded.position,
			  answer_found = excluded.answer_found`,
			v.CacheKey, v.AnswerID, v.Question, v.Normalized, string(v.Tier), string(v.Mode), v.Answer, string(sources), string(v.Synthesis),
			v.Model, string(subs), v.Backend, string(costs), v.SynthesizedAt.UTC(), v.ExpiresAt().UTC(), pos[i], v.AnswerFound)
	}
	if err := tx.SendBatch(ctx, q).Close(); err != nil {
		return fmt.Errorf("upserting cached answers: %w", err)
	}
	return nil
}

// CachedAnswer is one cache entry.
type CachedAnswer struct {
	CacheKey  string
	AnswerID  uuid.UUID
	Question  string
	Tier      answer.Tier
	Mode      answer.Mode
	Answer    string
	Sources   []answer.Source
	Synthesis answer.Synthesis
	// AnswerFound: a passage answers the question (AnswerSynthesized's).
	AnswerFound   bool
	Model         string
	SubQuestions  []string
	SynthesizedAt time.Time
	ExpiresAt     time.Time
	Position      int64
}

// Queries reads the answer cache. Safe for concurrent use.
type Queries struct{ pool projections.DB }

// NewQueries returns the queries over the answer cache.
func NewQueries(pool projections.DB) *Queries {
	return &Queries{pool: pool}
}

// ErrNoCachedAnswer: the cache holds nothing valid for the key.
var ErrNoCachedAnswer = errors.New("no cached answer")

// Lookup returns the entry of key if it is still valid at now.
func (q *Queries) Lookup(ctx context.Context, key string, now time.Time) (CachedAnswer, error) {
	var a CachedAnswer
	var sources, subs []byte
	var tier, mode, synthesis string
	err := q.pool.QueryRow(ctx, `SELECT cache_key, answer_id, question, tier, mode, answer, sources::text, synthesis, answer_found, model, sub_questions::text, synthesized_at, expires_at, position
		FROM rm_answer_cache.answers WHERE cache_key = $1 AND expires_at > $2`, key, now.UTC()).
		Scan(&a.CacheKey, &a.AnswerID, &a.Question, &tier, &mode, &a.Answer, &sources, &synthesis, &a.AnswerFound, &a.Model, &subs, &a.SynthesizedAt, &a.ExpiresAt, &a.Position)
	if errors.Is(err, pgx.ErrNoRows) {
		return CachedAnswer{}, ErrNoCachedAnswer
	}
	if err != nil {
		return CachedAnswer{}, fmt.Errorf("reading the answer cache: %w", err)
	}
	a.Tier, a.Mode, a.Synthesis = answer.Tier(tier), answer.Mode(mode), answer.Synthesis(synthesis)
	if err := json.Unmarshal(sources, &a.Sources); err != nil {
		return CachedAnswer{}, fmt.Errorf("decoding cached sources: %w", err)
	}
	if err := json.Unmarshal(subs, &a.SubQuestions); err != nil {
		return CachedAnswer{}, fmt.Errorf("decoding cached sub-questions: %w", err)
	}
	a.SynthesizedAt, a.ExpiresAt = a.SynthesizedAt.UTC(), a.ExpiresAt.UTC()
	return a, nil
}
