// Command extract measures how much of a documentation corpus's visible
// prose webpage.Extract keeps. For every HTML page under the given
// sections of a Sphinx HTML tree (default: Debian's python3.11-doc) it
// counts the words of the page's visible text with a simple, independent
// walk (every text node outside script, style, nav, footer, the Sphinx
// sidebar and related bars), then the share of those words found in the
// extraction (a multiset match: a word seen 3 times must be kept 3 times).
// Prose (outside <pre>) and code (inside <pre>) are counted apart.
//
// Headings count as prose kept (each section's own heading, once). The
// walk counts words per text node, so a word split by a tag
// ("python<em>XY</em>") is two words to it and one to the extraction,
// which joins inline elements as the page does: most of what the worst
// pages "lose" is that. Words the extraction keeps beyond the page's
// (table head names repeated in every row, mostly) are reported too, as
// a check that no boilerplate came in.
//
// It prints the distribution of the prose share (min, p5, median), the
// pages under 95% and 50%, the worst pages (-missing lists their lost
// words) and the extraction time (wall clock).
//
// Run: go run ./scripts/eval/extract (needs apt-get install python3.11-doc).
package main

import (
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"

	"golang.org/x/net/html"

	"github.com/arr-dev/arr/adapters/webpage"
)

func main() {
	dir := flag.String("dir", "/usr/share/doc/python3.11/html", "root of the Sphinx HTML tree (apt-get install python3.11-doc)")
	sections := flag.String("sections", "library,reference,tutorial,howto,faq", "comma-separated subdirectories to measure")
	worst := flag.Int("worst", 10, "how many of the worst pages to list")
	missing := flag.Bool("missing", false, "list the words each of the worst pages lost")
	flag.Parse()
	if err := run(*dir, strings.Split(*sections, ","), *worst, *missing); err != nil {
		fmt.Fprintln(os.Stderr, "extract:", err)
		os.Exit(1)
	}
}

type result struct {
	path              string
	proseSeen, kept   int
	codeSeen, codeHit int
	extra             int      // prose words kept that the page does not show
	missing           []string // prose words not kept
}

func (r result) share() float64 {
	if r.proseSeen == 0 {
		return 1
	}
	return float64(r.kept) / float64(r.proseSeen)
}

func run(dir string, sections []string, worst int, missing bool) error {
	var files []string
	for _, s := range sections {
		root := filepath.Join(dir, s)
		if _, err := os.Stat(root); err != nil {
			return fmt.Errorf("%w (install the corpus: apt-get install -y python3.11-doc)", err)
		}
		err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
			if err == nil && !e.IsDir() && strings.HasSuffix(p, ".html") {
				files = append(files, p)
			}
			return err
		})
		if err != nil {
			return err
		}
	}
	if len(files) == 0 {
		return fmt.Errorf("no HTML pages under %s/{%s}", dir, strings.Join(sections, ","))
	}
	var results []result
	var took time.Duration
	var bytes int
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		doc, err := html.Parse(strings.NewReader(string(b)))
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		prose, code := visible(doc)
		t := time.Now()
		p, err := webpage.Extract(webpage.Raw{URL: "file://" + f, ContentType: "text/html", Body: b})
		took += time.Since(t)
		bytes += len(b)
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		keptProse, keptCode := kept(p)
		r := result{path: strings.TrimPrefix(f, dir+"/")}
		r.proseSeen, r.kept, r.missing = match(prose, keptProse)
		r.codeSeen, r.codeHit, _ = match(code, keptCode)
		for _, n := range keptProse {
			r.extra += n
		}
		results = append(results, r)
	}
	report(results, worst, missing, took, bytes)
	return nil
}

func report(rs []result, worst int, missing bool, took time.Duration, bytes int) {
	slices.SortFunc(rs, func(a, b result) int {
		if c := compare(a.share(), b.share()); c != 0 {
			return c
		}
		return strings.Compare(a.path, b.path)
	})
	var seen, kept, codeSeen, codeHit, under95, under50, extra int
	for _, r := range rs {
		extra += r.extra
		seen += r.proseSeen
		kept += r.kept
		codeSeen += r.codeSeen
		codeHit += r.codeHit
		if r.share() < 0.95 {
			under95++
		}
		if r.share() < 0.5 {
			under50++
		}
	}
	q := func(p float64) float64 { return rs[int(p*float64(len(rs)-1))].share() }
	fmt.Printf("pages: %d (%.1f MB, extraction %v in all, %v per page)\n", len(rs), float64(bytes)/1e6, took.Round(time.Millisecond), (took / time.Duration(len(rs))).Round(time.Microsecond))
	fmt.Printf("prose kept: min %.1f%%  p5 %.1f%%  median %.1f%%  overall %.1f%% (%d of %d words)\n", 100*rs[0].share(), 100*q(0.05), 100*q(0.5), pct(kept, seen), kept, seen)
	fmt.Printf("pages under 95%%: %d   under 50%%: %d\n", under95, under50)
	fmt.Printf("prose kept that the page does not show (boilerplate let in): %d words, %.2f%% of the prose kept\n", extra, pct(extra, kept+extra))
	fmt.Printf("code kept as code: %.1f%% (%d of %d words)\n", pct(codeHit, codeSeen), codeHit, codeSeen)
	fmt.Printf("worst %d:\n", min(worst, len(rs)))
	for _, r := range rs[:min(worst, len(rs))] {
		fmt.Printf("  %5.1f%%  %6d words  %s\n", 100*r.share(), r.proseSeen, r.path)
		if missing {
			fmt.Printf("          lost: %s\n", strings.Join(r.missing, " "))
		}
	}
}

func compare(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func pct(a, b int) float64 {
	if b == 0 {
		return 100
	}
	return 100 * float64(a) / float64(b)
}

// match returns how many words of seen there are, how many of them the
// kept multiset holds (taking them out of it) and the others.
func match(seen []string, kept map[string]int) (n, hit int, missing []string) {
	for _, w := range seen {
		n++
		if kept[w] > 0 {
			kept[w]--
			hit++
		} else {
			missing = append(missing, w)
		}
	}
	return n, hit, missing
}

// kept returns the words of the extraction's prose (each section's own
// heading, prose, term, item and row blocks) and of its code blocks.
func kept(p webpage.Page) (prose, code map[string]int) {
	prose, code = map[string]int{}, map[string]int{}
	for _, s := range p.Sections {
		if n := len(s.Heading); n > 0 {
			for _, w := range words(s.Heading[n-1]) {
				prose[w]++
			}
		}
		for _, b := range s.Blocks {
			into := prose
			if b.Kind == webpage.Code {
				into = code
			}
			for _, w := range words(b.Text) {
				into[w]++
			}
		}
	}
	return prose, code
}

// visible returns the words of every text node of the body outside
// script, style, nav, footer and Sphinx's sidebar and related bars: prose,
// and code (inside <pre>).
func visible(doc *html.Node) (prose, code []string) {
	var walk func(n *html.Node, inPre bool)
	walk = func(n *html.Node, inPre bool) {
		switch n.Type {
		case html.TextNode:
			if inPre {
				code = append(code, words(n.Data)...)
			} else {
				prose = append(prose, words(n.Data)...)
			}
			return
		case html.ElementNode:
			switch n.Data {
			case "head", "script", "style", "noscript", "template", "nav", "footer":
				return
			case "pre":
				inPre = true
			}
			for _, a := range n.Attr {
				if a.Key == "role" && a.Val == "navigation" {
					return
				}
				if a.Key == "class" {
					for _, c := range strings.Fields(a.Val) {
						if c == "sphinxsidebar" || c == "related" || c == "footer" {
							return
						}
					}
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, inPre)
		}
	}
	walk(doc, false)
	return prose, code
}

// words splits s into runs of letters and digits.
func words(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}
