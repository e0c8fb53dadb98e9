package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/arr-dev/arr/projections/answerdocs"

	"github.com/spf13/cobra"

	"github.com/arr-dev/arr/adapters/crawl"
	"github.com/arr-dev/arr/adapters/webpage"
	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/commands/docseed"
	"github.com/arr-dev/arr/domain"
)

// indexOptions are the flags of `arr answer index add`.
type indexOptions struct {
	asJSON, crawl, sameSite bool
	depth, limit            int
}

// indexAdd is `arr answer index add`: files and directories first, then
// the URLs in one crawl (so --limit and the visited set span them all).
func (a *cli) indexAdd(cmd *cobra.Command, args []string, o indexOptions) error {
	if o.depth < 0 || o.limit < 1 {
		return fmt.Errorf("--depth must be 0 or more and --limit 1 or more; got %d and %d", o.depth, o.limit)
	}
	if !o.crawl {
		o.depth = 0
	}
	var urls, paths []string
	for _, arg := range args {
		if isWebURL(arg) {
			urls = append(urls, arg)
		} else {
			paths = append(paths, arg)
		}
	}
	crawler, err := crawl.New(a.cfg.indexFetcher(), crawl.Config{Depth: o.depth, Limit: o.limit, SameSite: o.sameSite, UserAgent: robotsAgent})
	if err != nil {
		return err
	}
	s, err := a.open(cmd, openOptions{setup: true})
	if err != nil {
		return err
	}
	defer s.Close()
	h, err := commands.NewIndexDocumentHandler(s.store, s.now)
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	run := &indexRun{h: h, out: cmd.OutOrStdout(), asJSON: o.asJSON, bar: newProgressOf(os.Stderr, "indexing", "items")}
	for _, p := range paths {
		run.files(ctx, p)
	}
	if len(urls) > 0 {
		run.crawl(ctx, crawler, urls, o.depth > 0)
	}
	run.bar.Finish()
	// What was recorded stays recorded when the run is interrupted: report
	// it, within a bounded wait of its own.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if err := s.catchUp(wctx, answerdocs.Name); err != nil {
		return fmt.Errorf("waiting for the answer_docs read model: %w", err)
	}
	docs, err := s.app.Queries.AnswerDocs.Count(wctx)
	if err != nil {
		return fmt.Errorf("counting the indexed documents: %w", err)
	}
	counts := run.counts()
	if o.asJSON {
		if err := printJSON(cmd.OutOrStdout(), map[string]any{"results": nonNil(run.results), "added": counts["added"], "updated": counts["updated"],
			"unchanged": counts["unchanged"], "skipped": counts["skipped"], "failed": counts["failed"], "documents": docs}); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(cmd.OutOrStdout(), "%d added, %d updated, %d unchanged, %d skipped, %d failed; the index holds %d documents\n",
			counts["added"], counts["updated"], counts["unchanged"], counts["skipped"], counts["failed"], docs)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("interrupted after %d items: %w", len(run.results), err)
	}
	if counts["failed"] > 0 {
		return fmt.Errorf("%d of %d items failed", counts["failed"], len(run.results))
	}
	return nil
}

// crawl indexes the pages crawler finds from urls. Pages are extracted
// and recorded by a few workers while the crawler fetches the next ones:
// extraction takes a core, and appends of different documents
// group-commit together.
func (r *indexRun) crawl(ctx context.Context, crawler *crawl.Crawler, urls []string, crawling bool) {
	work := make(chan crawl.Result)
	var wg sync.WaitGroup
	for range indexWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for res := range work {
				r.crawled(ctx, res, crawling)
			}
		}()
	}
	for res := range crawler.Crawl(ctx, urls) {
		work <- res
	}
	close(work)
	wg.Wait()
}

// indexResult is what `arr answer index add` did with one item.
type indexResult struct {
	Item string `json:"item"`
	// Outcome is added, updated, unchanged, skipped or failed.
	Outcome string `json:"outcome"`
	DocID   string `json:"doc_id,omitempty"`
	// URL is the document's URL: for a page, its URL after redirects.
	URL string `json:"url,omitempty"`
	// From is the page that linked to Item, or the sitemap that listed it.
	From     string `json:"from,omitempty"`
	Passages int    `json:"passages,omitempty"`
	Reason   string `json:"reason,omitempty"`
}

// indexWorkers is how many pages are extracted and recorded at once.
const indexWorkers = 4

// indexRun adds items to the local index, reporting each one as it goes
// (a line on out unless asJSON) and the progress on bar. Safe for
// concurrent use.
type indexRun struct {
	h      *commands.IndexDocumentHandler
	out    io.Writer
	asJSON bool
	bar    *progress

	mu      sync.Mutex
	results []indexResult
	// pending is how many items are known to be waiting.
	pending int
}

func (r *indexRun) setPending(n int) {
	r.mu.Lock()
	r.pending = n
	r.mu.Unlock()
}

func (r *indexRun) report(res indexResult) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.results = append(r.results, res)
	if !r.asJSON {
		line := fmt.Sprintf("%-9s %s", res.Outcome, res.Item)
		if res.URL != "" && res.URL != res.Item {
			line += " (as " + res.URL + ")"
		}
		if res.Reason != "" {
			line += ": " + res.Reason
			if res.From != "" {
				line += " (found on " + res.From + ")"
			}
		}
		r.bar.clear()
		fmt.Fprintln(r.out, line)
	}
	r.bar.Set(uint64(len(r.results)), uint64(len(r.results)+r.pending))
}

// index records one document; lenient says a document with no text is
// skipped rather than failed (a page found by crawling).
func (r *indexRun) index(ctx context.Context, res indexResult, d commands.IndexDocument, lenient bool) {
	got, err := r.h.Handle(ctx, d)
	if err != nil {
		res.Outcome, res.Reason = "failed", err.Error()
		var de *domain.Error
		if lenient && errors.As(err, &de) && de.Code == "document_empty" {
			res.Outcome, res.Reason = "skipped", "no readable text"
		}
		r.report(res)
		return
	}
	res.Outcome, res.DocID, res.URL, res.Passages = got.Outcome, got.DocID, d.URL, got.Passages
	r.report(res)
}

// files indexes a file or a directory's indexable files.
func (r *indexRun) files(ctx context.Context, arg string) {
	items := collectFiles(arg, r.report)
	for i, it := range items {
		r.setPending(len(items) - i - 1)
		r.index(ctx, indexResult{Item: it.item}, it.doc, false)
	}
	r.setPending(0)
}

// crawled indexes what the crawler made of one URL. Crawling (depth > 0)
// makes a page with no readable text skipped rather than failed.
func (r *indexRun) crawled(ctx context.Context, c crawl.Result, crawling bool) {
	r.setPending(c.Pending)
	res := indexResult{Item: c.URL, From: c.From}
	if c.Outcome != crawl.Fetched {
		res.Outcome, res.Reason = string(c.Outcome), c.Err.Error()
		r.report(res)
		return
	}
	lenient := crawling || c.Depth > 0
	p, err := webpage.Extract(webpage.Raw{URL: c.FinalURL, ContentType: c.ContentType, Body: c.Body, Truncated: c.Truncated, LastModified: c.LastModified})
	if err != nil {
		res.Outcome, res.Reason = "failed", err.Error()
		if lenient {
			res.Outcome = "skipped"
		}
		r.report(res)
		return
	}
	r.index(ctx, res, docseed.PageDoc(c.FinalURL, "", p), lenient)
}

// counts is how many results had each outcome.
func (r *indexRun) counts() map[string]int {
	n := map[string]int{"added": 0, "updated": 0, "unchanged": 0, "skipped": 0, "failed": 0}
	for _, res := range r.results {
		n[res.Outcome]++
	}
	return n
}

// isWebURL tells a URL argument from a path.
func isWebURL(arg string) bool {
	u, err := url.Parse(arg)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https")
}

var indexable = map[string]string{".md": "text/markdown", ".markdown": "text/markdown", ".txt": "text/plain", ".html": "text/html", ".htm": "text/html"}

// item is a document to index and how the user named it.
type item struct {
	item string
	doc  commands.IndexDocument
}

// collectFiles turns a file or directory argument into documents; what
// cannot be read is reported as failed.
func collectFiles(arg string, report func(indexResult)) []item {
	abs, err := filepath.Abs(arg)
	if err != nil {
		report(indexResult{Item: arg, Outcome: "failed", Reason: err.Error()})
		return nil
	}
	st, err := os.Stat(abs)
	if err != nil {
		report(indexResult{Item: arg, Outcome: "failed", Reason: "neither an http(s) URL nor a readable file or directory"})
		return nil
	}
	if !st.IsDir() {
		d, err := fileDoc(abs)
		if err != nil {
			report(indexResult{Item: arg, Outcome: "failed", Reason: err.Error()})
			return nil
		}
		return []item{{arg, d}}
	}
	var out []item
	_ = filepath.WalkDir(abs, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			report(indexResult{Item: p, Outcome: "failed", Reason: err.Error()})
			return nil
		}
		if e.IsDir() && strings.HasPrefix(e.Name(), ".") && p != abs {
			return filepath.SkipDir
		}
		if e.IsDir() || indexable[strings.ToLower(filepath.Ext(p))] == "" {
			return nil
		}
		d, err := fileDoc(p)
		if err != nil {
			report(indexResult{Item: p, Outcome: "failed", Reason: err.Error()})
			return nil
		}
		out = append(out, item{p, d})
		return nil
	})
	return out
}

// fileDoc reads a local file as a document the answer service serves at
// /docs/{doc_id}.
func fileDoc(path string) (commands.IndexDocument, error) {
	ct := indexable[strings.ToLower(filepath.Ext(path))]
	if ct == "" {
		ct = "text/plain"
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return commands.IndexDocument{}, err
	}
	p, err := webpage.Extract(webpage.Raw{URL: (&url.URL{Scheme: "file", Path: path}).String(), ContentType: ct, Body: b})
	if err != nil {
		return commands.IndexDocument{}, err
	}
	if p.Title == "" {
		p.Title = filepath.Base(path)
	}
	return docseed.PageDoc("", path, p), nil
}
