package app

import (
	"context"
	"time"

	"github.com/arr-dev/arr/domain/answer"
	"github.com/arr-dev/arr/domain/answer/terms"
	"github.com/arr-dev/arr/projections/answercache"
	"github.com/arr-dev/arr/projections/answerdocs"
)

// AnswerCache is the answer service's cache of synthesized answers
// (projections/answercache).
type AnswerCache interface {
	Lookup(ctx context.Context, key string, now time.Time) (answercache.CachedAnswer, error)
}

// AnswerDocs is the answer service's local index: documents and their
// passages (projections/answerdocs).
type AnswerDocs interface {
	Count(ctx context.Context) (int64, error)
	Document(ctx context.Context, docID string) (answerdocs.IndexedDoc, error)
	Generation(ctx context.Context) (uint64, error)
	Passages(ctx context.Context) ([]answer.IndexedPassage, uint64, error)
	Candidates(ctx context.Context, qt []string, limit int) (terms.Candidates, error)
}

var (
	_ AnswerCache = (*answercache.Queries)(nil)
	_ AnswerDocs  = (*answerdocs.Queries)(nil)
)
