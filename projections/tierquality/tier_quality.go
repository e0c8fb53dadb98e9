package tierquality

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/arr-dev/arr/domain/feedback"
	"github.com/arr-dev/arr/domain/routing"
	"github.com/arr-dev/arr/projections"
)

// Projection is the read model of feedback: each completion's latest
// rating, and per tier and difficulty band the number of ratings and the
// sum of their observed qualities. The router blends it into its
// predictions (routing.Feedback).
type Projection struct{}

// Name is the projection's name and checkpoint key.
const Name = "tier_quality"

// ddl is the read model's tables.
const ddl = `
CREATE TABLE ratings (
    audit_hash text             COLLATE "C" PRIMARY KEY,
    tier       text             NOT NULL,
    band       text             NOT NULL,
    rating     double precision NOT NULL,
    position   bigint           NOT NULL
);
CREATE TABLE tier_band (
    tier        text             NOT NULL,
    band        text             NOT NULL,
    ratings     bigint           NOT NULL,
    quality_sum double precision NOT NULL,
    PRIMARY KEY (tier, band)
);
`

// Spec implements projections.Projection.
func (Projection) Spec() projections.Spec {
	return projections.Spec{Name: Name, DDL: ddl, Handlers: []projections.Handler{projections.On(rate)}}
}

// rate applies a rating. Feedback is rare next to completions, so it goes
// rating by rating: a new rating of a completion replaces its old one in
// the sums.
func rate(ctx context.Context, tx pgx.Tx, e projections.Event, p *feedback.FeedbackSubmitted) error {
	f := *p
	band := string(routing.BandOf(f.Difficulty))
	var oldTier, oldBand string
	var old float64
	err := tx.QueryRow(ctx, `SELECT tier, band, rating FROM ratings WHERE audit_hash = $1`, f.AuditHash).Scan(&oldTier, &oldBand, &old)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
	case err != nil:
		return fmt.Errorf("reading rating of %s: %w", f.AuditHash, err)
	default:
		if _, err := tx.Exec(ctx, `UPDATE tier_band SET ratings = ratings - 1, quality_sum = quality_sum - $3 WHERE tier = $1 AND band = $2`,
			oldTier, oldBand, routing.RatingQuality(old)); err != nil {
			return fmt.Errorf("replacing rating of %s: %w", f.AuditHash, err)
		}
	}
	if _, err := tx.Exec(ctx, `INSERT INTO ratings (audit_hash, tier, band, rating, position) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (audit_hash) DO UPDATE SET tier = excluded.tier, band = excluded.band, rating = excluded.rating, position = excluded.position`,
		f.AuditHash, f.Tier, band, f.Rating, int64(e.Position)); err != nil {
		return fmt.Errorf("storing rating of %s: %w", f.AuditHash, err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO tier_band AS t (tier, band, ratings, quality_sum) VALUES ($1, $2, 1, $3)
		ON CONFLICT (tier, band) DO UPDATE SET ratings = t.ratings + 1, quality_sum = t.quality_sum + excluded.quality_sum`,
		f.Tier, band, routing.RatingQuality(f.Rating)); err != nil {
		return fmt.Errorf("adding rating of %s: %w", f.AuditHash, err)
	}
	return nil
}

// Queries reads the tier-quality read model. Safe for concurrent use.
type Queries struct{ pool projections.DB }

// NewQueries returns the queries.
func NewQueries(pool projections.DB) *Queries { return &Queries{pool: pool} }

// Feedback returns the statistics per tier and band.
func (q *Queries) Feedback(ctx context.Context) (routing.Feedback, error) {
	rows, err := q.pool.Query(ctx, `SELECT tier, band, ratings, quality_sum FROM rm_tier_quality.tier_band WHERE ratings > 0`)
	if err != nil {
		return nil, fmt.Errorf("reading tier quality: %w", err)
	}
	defer rows.Close()
	fb := routing.Feedback{}
	for rows.Next() {
		var tier, band string
		var st routing.Stat
		if err := rows.Scan(&tier, &band, &st.N, &st.QualitySum); err != nil {
			return nil, fmt.Errorf("reading tier quality: %w", err)
		}
		fb[routing.TierBand{Tier: tier, Band: routing.Band(band)}] = st
	}
	return fb, rows.Err()
}
