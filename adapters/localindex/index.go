package localindex

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/arr-dev/arr/adapters/websearch"
	"github.com/arr-dev/arr/domain"
)

// LockTimeout bounds the wait for another process's write lock.
const LockTimeout = 5 * time.Second

// Doc is one indexed document.
type Doc struct {
	// URL is absolute; it is the document's identity (adding the same URL
	// again replaces it).
	URL     string `json:"url"`
	Title   string `json:"title"`
	Content string `json:"content"`
}

// Index is the on-disk index in Dir.
type Index struct{ dir string }

// New returns the index in dir (created on the first Add).
func New(dir string) *Index { return &Index{dir: dir} }

// Dir is where the index lives.
func (x *Index) Dir() string { return x.dir }

// Name implements the answer service's Searcher.
func (*Index) Name() string { return "local" }

func newMapping() mapping.IndexMapping {
	text := bleve.NewTextFieldMapping()
	text.Analyzer = en.AnalyzerName
	text.Store = true
	url := bleve.NewKeywordFieldMapping()
	url.Index = false
	doc := bleve.NewDocumentMapping()
	doc.AddFieldMappingsAt("title", text)
	doc.AddFieldMappingsAt("content", text)
	doc.AddFieldMappingsAt("url", url)
	m := bleve.NewIndexMapping()
	m.DefaultMapping = doc
	m.DefaultAnalyzer = en.AnalyzerName
	m.ScoringModel = "bm25"
	return m
}

func (x *Index) exists() bool {
	_, err := os.Stat(filepath.Join(x.dir, "index_meta.json"))
	return err == nil
}

func (x *Index) open(readOnly bool) (bleve.Index, error) {
	cfg := map[string]interface{}{"bolt_timeout": LockTimeout.String(), "read_only": readOnly}
	if !x.exists() {
		if readOnly {
			return nil, nil
		}
		if err := os.MkdirAll(filepath.Dir(x.dir), 0o755); err != nil {
			return nil, err
		}
		return bleve.NewUsing(x.dir, newMapping(), bleve.Config.DefaultIndexType, bleve.Config.DefaultKVStore, cfg)
	}
	return bleve.OpenUsing(x.dir, cfg)
}

// Add indexes docs (replacing documents with the same URL).
func (x *Index) Add(ctx context.Context, docs ...Doc) error {
	idx, err := x.open(false)
	if err != nil {
		return fmt.Errorf("opening the local index %s: %w", x.dir, err)
	}
	defer idx.Close()
	b := idx.NewBatch()
	for _, d := range docs {
		if err := ctx.Err(); err != nil {
			return err
		}
		if strings.TrimSpace(d.Content) == "" {
			continue
		}
		if err := b.Index(d.URL, d); err != nil {
			return fmt.Errorf("indexing %s: %w", d.URL, err)
		}
	}
	if err := idx.Batch(b); err != nil {
		return fmt.Errorf("writing the local index: %w", err)
	}
	return nil
}

// Count returns how many documents the index holds.
func (x *Index) Count() (uint64, error) {
	idx, err := x.open(true)
	if err != nil || idx == nil {
		return 0, err
	}
	defer idx.Close()
	return idx.DocCount()
}

// Search returns up to n documents for q, best BM25 score first. An index
// not created yet has no hits.
func (x *Index) Search(ctx context.Context, q string, n int) ([]websearch.Hit, error) {
	idx, err := x.open(true)
	if err != nil {
		return nil, fmt.Errorf("local search: %w: opening %s: %w", domain.ErrUnavailable, x.dir, err)
	}
	if idx == nil {
		return nil, nil
	}
	defer idx.Close()
	content := bleve.NewMatchQuery(q)
	content.SetField("content")
	title := bleve.NewMatchQuery(q)
	title.SetField("title")
	title.SetBoost(2)
	req := bleve.NewSearchRequestOptions(query.NewDisjunctionQuery([]query.Query{content, title}), n, 0, false)
	req.Fields = []string{"title", "content", "url"}
	res, err := idx.SearchInContext(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("local search: %w: %w", domain.ErrUnavailable, err)
	}
	out := make([]websearch.Hit, 0, len(res.Hits))
	for _, h := range res.Hits {
		title, _ := h.Fields["title"].(string)
		text, _ := h.Fields["content"].(string)
		out = append(out, websearch.Hit{Title: title, URL: h.ID, Content: text, Snippet: snippet(text)})
	}
	return out, nil
}

func snippet(s string) string {
	if len(s) > 240 {
		s = s[:240]
	}
	return strings.TrimSpace(s)
}

const seededKey = "arr:seeded:"

// Seeded reports whether the seed named name was added.
func (x *Index) Seeded(name string) (bool, error) {
	idx, err := x.open(true)
	if err != nil || idx == nil {
		return false, err
	}
	defer idx.Close()
	v, err := idx.GetInternal([]byte(seededKey + name))
	return len(v) > 0, err
}

// AddSeed adds docs and marks the seed name as done, in one open.
func (x *Index) AddSeed(ctx context.Context, name string, docs ...Doc) error {
	if err := x.Add(ctx, docs...); err != nil {
		return err
	}
	idx, err := x.open(false)
	if err != nil {
		return err
	}
	defer idx.Close()
	return idx.SetInternal([]byte(seededKey+name), []byte(time.Now().UTC().Format(time.RFC3339)))
}

// ErrEmpty: nothing to index was found.
var ErrEmpty = errors.New("nothing to index")
