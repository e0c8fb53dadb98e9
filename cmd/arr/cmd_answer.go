package main

import (
	"errors"
	"fmt"

	"github.com/arr-dev/arr/projections/answerdocs"

	"github.com/spf13/cobra"
)

func (a *cli) answerCmd() *cobra.Command {
	c := &cobra.Command{Use: "answer", Short: "The answer service's local search index"}
	idx := &cobra.Command{Use: "index", Short: "Fill and inspect the local search index (ARR_SEARCH=local)"}
	var o indexOptions
	add := &cobra.Command{
		Use:   "add URL|FILE|DIR|SITEMAP... [--crawl] [--depth N] [--limit N] [--same-site] [--json]",
		Short: "Add web pages, sites, sitemaps, files or directories (.md, .txt, .html) to the local search index",
		Long: "Add documents to the local search index (a read model of DocumentIndexed events).\n\n" +
			"A URL is fetched and its text extracted; the document's URL is the URL after redirects. robots.txt is respected\n" +
			"for every URL fetched (read once per site; user agent arr; a missing robots.txt allows all). A URL that is a sitemap\n" +
			"(it ends in .xml or is served as XML with <urlset> or <sitemapindex>) adds every <loc> it lists, following sitemap\n" +
			"indexes. With --crawl, links (a[href]) are followed breadth-first from each URL, --depth links deep, on the same\n" +
			"site (scheme, host and port) unless --same-site=false; fragments are dropped and each URL is visited once. At most\n" +
			"--limit URLs are visited in all.\n\n" +
			"A file is read (HTML without navigation and boilerplate; Markdown and text by their headings and paragraphs;\n" +
			"code listings are kept with the document but not indexed) and served by the answer service at /docs/{doc_id}; a directory adds its .md,\n" +
			".markdown, .txt, .html and .htm files.\n\n" +
			"Adding the same URL or file again updates it in place when its content changed and records nothing when it did not.\n" +
			"Each item is reported as added, updated, unchanged, skipped (found by crawling but not for the index: an image,\n" +
			"a PDF, a page with no text, a redirect elsewhere) or failed (with the reason: HTTP 404, disallowed by robots.txt,\n" +
			"not a readable type, ...); a failure does not undo what succeeded. Progress goes to stderr: a bar on a terminal,\n" +
			"plain lines otherwise. Exit 1 if any item failed. Works while arr up is running.",
		Example: "  arr answer index add ./docs https://example.com/faq\n" +
			"  arr answer index add https://example.com/ --crawl --depth 3 --limit 200\n" +
			"  arr answer index add https://example.com/sitemap.xml --json",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !o.crawl && cmd.Flags().Changed("depth") {
				return errors.New("--depth needs --crawl")
			}
			return a.indexAdd(cmd, args, o)
		},
	}
	add.Flags().BoolVar(&o.asJSON, "json", false, "print JSON")
	add.Flags().BoolVar(&o.crawl, "crawl", false, "follow links from each URL, breadth-first")
	add.Flags().IntVar(&o.depth, "depth", 2, "with --crawl: how many links deep to go from each URL (0: the URLs only)")
	add.Flags().IntVar(&o.limit, "limit", 500, "the most URLs visited in all (crawled pages, sitemap entries and the URLs given)")
	add.Flags().BoolVar(&o.sameSite, "same-site", true, "stay on each URL's site (scheme, host and port) when crawling or reading a sitemap")
	count := &cobra.Command{
		Use:   "count",
		Short: "How many documents the local search index holds",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := a.open(cmd, openOptions{catchUp: []string{answerdocs.Name}})
			if err != nil {
				return err
			}
			defer s.Close()
			n, err := s.app.Queries.AnswerDocs.Count(cmd.Context())
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
