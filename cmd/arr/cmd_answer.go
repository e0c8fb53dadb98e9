package main

import (
	"context"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/arr-dev/arr/adapters/webpage"
	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/projections"
)

// indexResult is what `arr answer index add` did with one item.
type indexResult struct {
	Item string `json:"item"`
	// Outcome is added, updated, unchanged or failed.
	Outcome  string `json:"outcome"`
	DocID    string `json:"doc_id,omitempty"`
	URL      string `json:"url,omitempty"`
	Passages int    `json:"passages,omitempty"`
	Reason   string `json:"reason,omitempty"`
}

func (a *app) answerCmd() *cobra.Command {
	c := &cobra.Command{Use: "answer", Short: "The answer service's local search index"}
	idx := &cobra.Command{Use: "index", Short: "Fill and inspect the local search index (ARR_SEARCH=local)"}
	var asJSON bool
	add := &cobra.Command{
		Use:   "add URL|FILE|DIR...",
		Short: "Add web pages, files or directories (.md, .txt, .html) to the local search index",
		Long: "Add documents to the local search index (a read model of DocumentIndexed events).\n" +
			"A URL is fetched and its text extracted; a file is read (HTML, Markdown, text) and served by the answer service at\n" +
			"/docs/{doc_id}; a directory adds its .md, .markdown, .txt, .html and .htm files. Adding the same URL or file again\n" +
			"updates it in place when its content changed and records nothing when it did not. Each item is reported as added,\n" +
			"updated, unchanged or failed (with the reason); a failure does not undo what succeeded. Exit 1 if any item failed.\n" +
			"Works while arr up is running.",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := a.cfg.Answer.validate(); err != nil {
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
			f := a.cfg.fetcher()
			var results []indexResult
			report := func(r indexResult) {
				results = append(results, r)
				if !asJSON {
					line := fmt.Sprintf("%-9s %s", r.Outcome, r.Item)
					if r.Reason != "" {
						line += ": " + r.Reason
					}
					fmt.Fprintln(cmd.OutOrStdout(), line)
				}
			}
			for _, arg := range args {
				for _, d := range collect(cmd.Context(), f, arg, report) {
					res, err := h.Handle(cmd.Context(), d.doc)
					if err != nil {
						report(indexResult{Item: d.item, Outcome: "failed", Reason: err.Error()})
						continue
					}
					report(indexResult{Item: d.item, Outcome: res.Outcome, DocID: res.DocID, URL: d.doc.URL, Passages: res.Passages})
				}
			}
			if err := s.catchUp(cmd.Context(), projections.AnswerDocsName); err != nil {
				return err
			}
			counts := map[string]int{}
			for _, r := range results {
				counts[r.Outcome]++
			}
			docs, err := projections.NewAnswerDocQueries(s.pool).Count(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				if err := printJSON(cmd.OutOrStdout(), map[string]any{"results": nonNil(results), "added": counts["added"], "updated": counts["updated"],
					"unchanged": counts["unchanged"], "failed": counts["failed"], "documents": docs}); err != nil {
					return err
				}
			} else {
				fmt.Fprintf(cmd.OutOrStdout(), "%d added, %d updated, %d unchanged, %d failed; the index holds %d documents\n",
					counts["added"], counts["updated"], counts["unchanged"], counts["failed"], docs)
			}
			if counts["failed"] > 0 {
				return fmt.Errorf("%d of %d items failed", counts["failed"], len(results))
			}
			return nil
		},
	}
	add.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	count := &cobra.Command{
		Use:   "count",
		Short: "How many documents the local search index holds",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := a.open(cmd, openOptions{catchUp: []string{projections.AnswerDocsName}})
			if err != nil {
				return err
			}
			defer s.Close()
			n, err := projections.NewAnswerDocQueries(s.pool).Count(cmd.Context())
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), n)
			return nil
		},
	}
	idx.AddCommand(add, count)
	c.AddCommand(idx)
	return c
}

var indexable = map[string]string{".md": "text/markdown", ".markdown": "text/markdown", ".txt": "text/plain", ".html": "text/html", ".htm": "text/html"}

// item is a document to index and how the user named it.
type item struct {
	item string
	doc  commands.IndexDocument
}

// collect turns one argument into documents; what cannot be read is
// reported as failed.
func collect(ctx context.Context, f *webpage.Fetcher, arg string, report func(indexResult)) []item {
	if u, err := url.Parse(arg); err == nil && (u.Scheme == "http" || u.Scheme == "https") {
		raw, err := f.Fetch(ctx, arg)
		if err != nil {
			report(indexResult{Item: arg, Outcome: "failed", Reason: err.Error()})
			return nil
		}
		p, err := webpage.Extract(raw)
		if err != nil {
			report(indexResult{Item: arg, Outcome: "failed", Reason: err.Error()})
			return nil
		}
		return []item{{arg, pageDoc(raw.URL, "", p)}}
	}
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
	return pageDoc("", path, p), nil
}
