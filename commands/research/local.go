package research

import (
	"context"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/arr-dev/arr/adapters/websearch"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/answer"
)

// Corpus is the local index as a read model (answerdocs.Queries
// is one).
type Corpus interface {
	// Generation is the position of the latest document version.
	Generation(ctx context.Context) (uint64, error)
	// Passages returns every passage and the generation they are of.
	Passages(ctx context.Context) ([]answer.IndexedPassage, uint64, error)
}

// PassageSearcher is a search backend that returns ranked passages rather
// than pages to read.
type PassageSearcher interface {
	Searcher
	// SearchPassages returns the best n passages for q and the index they
	// come from.
	SearchPassages(ctx context.Context, q string, n int) ([]Scored, *Index, error)
	// Generation is the index's current generation.
	Generation(ctx context.Context) (uint64, error)
}

// Local is the "local" search backend: passage retrieval (BM25F, Index)
// over the local index read model, held in memory and rebuilt when the
// read model's generation changes. Every search checks the generation
// first (one index probe), so a document indexed before the question is
// there to answer it; Run rebuilds in the background as soon as the
// generation moves, so searches rarely wait for a build. Safe for
// concurrent use.
type Local struct {
	corpus Corpus
	w      Weights
	flight singleflight.Group

	mu  sync.RWMutex
	idx *Index
}

// RefreshEvery is how often Run checks the read model's generation.
const RefreshEvery = 250 * time.Millisecond

// Run rebuilds the index in memory in the background until ctx ends: it
// checks the generation every RefreshEvery and rebuilds when it moved.
func (l *Local) Run(ctx context.Context, warn func(msg string, args ...any)) {
	t := time.NewTicker(RefreshEvery)
	defer t.Stop()
	for {
		gen, err := l.corpus.Generation(ctx)
		if err == nil {
			_, err = l.index(ctx, gen)
		}
		if err != nil && ctx.Err() == nil {
			warn("local index: refreshing", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// current returns the index of the read model's current generation.
func (l *Local) current(ctx context.Context) (*Index, error) {
	g, err := l.corpus.Generation(ctx)
	if err != nil {
		return nil, fmt.Errorf("local search: %w: %w", domain.ErrUnavailable, err)
	}
	return l.index(ctx, g)
}

// NewLocal returns the local backend over corpus.
func NewLocal(corpus Corpus, w Weights) *Local { return &Local{corpus: corpus, w: w} }

// Name implements Searcher.
func (*Local) Name() string { return "local" }

// Generation implements PassageSearcher: the generation of the index
// searches use now.
func (l *Local) Generation(ctx context.Context) (uint64, error) {
	idx, err := l.current(ctx)
	if err != nil {
		return 0, err
	}
	return idx.Generation, nil
}

// index returns the in-memory index of generation gen, building it when
// the one held is older (one build at a time).
func (l *Local) index(ctx context.Context, gen uint64) (*Index, error) {
	l.mu.RLock()
	idx := l.idx
	l.mu.RUnlock()
	if idx != nil && idx.Generation >= gen {
		return idx, nil
	}
	v, err, _ := l.flight.Do("build", func() (any, error) {
		ps, g, err := l.corpus.Passages(context.WithoutCancel(ctx))
		if err != nil {
			return nil, err
		}
		built := BuildIndex(ps, g, l.w)
		l.mu.Lock()
		if l.idx == nil || l.idx.Generation < built.Generation {
			l.idx = built
		}
		l.mu.Unlock()
		return built, nil
	})
	if err != nil {
		return nil, fmt.Errorf("local search: %w: loading the index: %w", domain.ErrUnavailable, err)
	}
	return v.(*Index), nil
}

// SearchPassages implements PassageSearcher.
func (l *Local) SearchPassages(ctx context.Context, q string, n int) ([]Scored, *Index, error) {
	idx, err := l.current(ctx)
	if err != nil {
		return nil, nil, err
	}
	return idx.Search(q, n), idx, nil
}

// Search implements Searcher: the pages of the best passages, best first,
// each with its best passage as content.
func (l *Local) Search(ctx context.Context, q string, n int) ([]websearch.Hit, error) {
	ps, _, err := l.SearchPassages(ctx, q, 10*n)
	if err != nil {
		return nil, err
	}
	return pageHits(ps, n), nil
}

// pageHits are the pages of ps, best first, at most n, each with its best
// passage as content.
func pageHits(ps []Scored, n int) []websearch.Hit {
	var out []websearch.Hit
	seen := map[string]bool{}
	for _, p := range ps {
		if seen[p.DocID] || len(out) == n {
			continue
		}
		seen[p.DocID] = true
		out = append(out, websearch.Hit{Title: p.Title, URL: p.URL, Content: p.Text, Snippet: p.Text})
	}
	return out
}
