package main

import (
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/arr-dev/arr/adapters/localindex"
	"github.com/arr-dev/arr/adapters/webpage"
)

func (a *app) answerCmd() *cobra.Command {
	c := &cobra.Command{Use: "answer", Short: "The answer service's local search index"}
	idx := &cobra.Command{Use: "index", Short: "Fill and inspect the local search index (ARR_SEARCH=local)"}
	var asJSON bool
	add := &cobra.Command{
		Use:   "add URL|FILE|DIR...",
		Short: "Add web pages, files or directories (.md, .txt, .html) to the local search index",
		Long: "Add documents to the local search index under ARR_ANSWER_INDEX_DIR (default ARR_DATA_DIR/answer-index).\n" +
			"A URL is fetched and its main text extracted; a file is read (HTML without navigation and boilerplate, Markdown and text by\n" +
			"their headings and paragraphs; code listings are left out of the indexed text) and\n" +
			"cited with its file:// URL; a directory adds its .md, .markdown, .txt, .html and .htm files. Adding a URL again replaces it.\n" +
			"Works while arr up is running.",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := a.cfg.Answer.validate(); err != nil {
				return err
			}
			x := localindex.New(a.cfg.indexDir())
			f := a.cfg.fetcher()
			var docs []localindex.Doc
			for _, arg := range args {
				d, err := collect(cmd, f, arg)
				if err != nil {
					return err
				}
				docs = append(docs, d...)
			}
			if len(docs) == 0 {
				return fmt.Errorf("%w in %s", localindex.ErrEmpty, strings.Join(args, " "))
			}
			if err := x.Add(cmd.Context(), docs...); err != nil {
				return err
			}
			n, _ := x.Count()
			if asJSON {
				return printJSON(cmd.OutOrStdout(), map[string]any{"added": len(docs), "documents": n, "dir": x.Dir()})
			}
			fmt.Fprintf(cmd.OutOrStdout(), "added %d documents; the index in %s holds %d\n", len(docs), x.Dir(), n)
			return nil
		},
	}
	add.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	count := &cobra.Command{
		Use:   "count",
		Short: "How many documents the local search index holds",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			n, err := localindex.New(a.cfg.indexDir()).Count()
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

// collect turns one argument into documents.
func collect(cmd *cobra.Command, f *webpage.Fetcher, arg string) ([]localindex.Doc, error) {
	if u, err := url.Parse(arg); err == nil && (u.Scheme == "http" || u.Scheme == "https") {
		raw, err := f.Fetch(cmd.Context(), arg)
		if err != nil {
			return nil, err
		}
		p, err := webpage.Extract(raw)
		if err != nil {
			return nil, err
		}
		return []localindex.Doc{{URL: p.URL, Title: p.Title, Content: p.Text}}, nil
	}
	abs, err := filepath.Abs(arg)
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("%s is neither an http(s) URL nor a readable file or directory: %w", arg, err)
	}
	if !st.IsDir() {
		d, err := fileDoc(abs)
		if err != nil {
			return nil, err
		}
		return []localindex.Doc{d}, nil
	}
	var out []localindex.Doc
	err = filepath.WalkDir(abs, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() && strings.HasPrefix(e.Name(), ".") && p != abs {
			return filepath.SkipDir
		}
		if e.IsDir() || indexable[strings.ToLower(filepath.Ext(p))] == "" {
			return nil
		}
		d, err := fileDoc(p)
		if err != nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "skipping %s: %v\n", p, err)
			return nil
		}
		out = append(out, d)
		return nil
	})
	return out, err
}

func fileDoc(path string) (localindex.Doc, error) {
	ct := indexable[strings.ToLower(filepath.Ext(path))]
	if ct == "" {
		ct = "text/plain"
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return localindex.Doc{}, err
	}
	u := (&url.URL{Scheme: "file", Path: path}).String()
	p, err := webpage.Extract(webpage.Raw{URL: u, ContentType: ct, Body: b})
	if err != nil {
		return localindex.Doc{}, err
	}
	if p.Title == "" {
		p.Title = filepath.Base(path)
	}
	return localindex.Doc{URL: u, Title: p.Title, Content: p.Text}, nil
}
