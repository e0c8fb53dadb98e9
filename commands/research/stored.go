package research

import (
	"context"
	"fmt"
	"time"

	"github.com/arr-dev/arr/adapters/websearch"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/answer/terms"
)

// StoredIndex is the local index as the read model holds it
// (answerdocs.Queries is one): its GIN-indexed passages and corpus
// statistics.
type StoredIndex interface {
	// Generation is the position of the latest document version.
	Generation(ctx context.Context) (uint64, error)
	// Candidates returns the best limit passages holding the query terms,
	// with the corpus statistics of the same snapshot.
	Candidates(ctx context.Context, qt []string, limit int) (terms.Candidates, error)
}

// Stored is the "local" search backend over the read model, nothing of
// the corpus held in memory: PostgreSQL's full-text index picks the
// candidate passages (Candidates), which BM25F (Index, with the read
// model's corpus statistics, so its scores are those of an index of the
// whole corpus) ranks. A document indexed is searched as soon as the
// projection has stored it, without a rebuild. Every search is bounded by
// Timeout. Safe for concurrent use.
type Stored struct {
	index StoredIndex
	w     Weights
	// Pool is how many candidates BM25F ranks (at least the n asked for).
	Pool int
	// Timeout bounds each search.
	Timeout time.Duration
}

// Stored defaults: chosen by measurement (docs/answers.md, "Retrieval").
const (
	DefaultPool          = 300
	DefaultSearchTimeout = 5 * time.Second
	// maxPool bounds the candidates of a search asking for every match
	// (a filtered one).
	maxPool = 5000
)

// NewStored returns the stored backend over index.
func NewStored(index StoredIndex, w Weights) *Stored {
	return &Stored{index: index, w: w, Pool: DefaultPool, Timeout: DefaultSearchTimeout}
}

// Name implements Searcher.
func (*Stored) Name() string { return "local" }

// Generation implements PassageSearcher.
func (s *Stored) Generation(ctx context.Context) (uint64, error) {
	ctx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	g, err := s.index.Generation(ctx)
	if err != nil {
		return 0, fmt.Errorf("local search: %w: %w", domain.ErrUnavailable, err)
	}
	return g, nil
}

// SearchPassages implements PassageSearcher: the best n passages (n at
// most maxPool) and the index of the candidates they were ranked among.
func (s *Stored) SearchPassages(ctx context.Context, q string, n int) ([]Scored, *Index, error) {
	qt := uniqueTerms(Terms(q))
	if len(qt) == 0 {
		return nil, BuildIndex(nil, 0, s.w), nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	c, err := s.index.Candidates(ctx, qt, min(max(s.Pool, n), maxPool))
	if err != nil {
		return nil, nil, fmt.Errorf("local search: %w: %w", domain.ErrUnavailable, err)
	}
	idx := IndexCandidates(c, s.w)
	return idx.Search(q, n), idx, nil
}

// Search implements Searcher: the pages of the best passages, best first,
// each with its best passage as content.
func (s *Stored) Search(ctx context.Context, q string, n int) ([]websearch.Hit, error) {
	ps, _, err := s.SearchPassages(ctx, q, 10*n)
	if err != nil {
		return nil, err
	}
	return pageHits(ps, n), nil
}
