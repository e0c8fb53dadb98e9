// Command retrieve shows what passage retrieval ranks first for a
// question over the Python documentation pages of the answer evaluation
// (scripts/eval/pages.txt), without running arr: for looking into a
// ranking while tuning. With -tune it prints, for a grid of field
// weights, the share of the evaluation's TUNE questions (never the
// held-out ones) whose expected page is among the pages of the best 5
// passages.
//
//	go run ./scripts/eval/retrieve "question" [n]
//	go run ./scripts/eval/retrieve -tune
//	go run ./scripts/eval/retrieve -answer "question"
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/arr-dev/arr/adapters/webpage"
	"github.com/arr-dev/arr/commands/research"
	"github.com/arr-dev/arr/domain/answer"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: retrieve QUESTION [N] | -tune")
		os.Exit(2)
	}
	if os.Args[1] == "-recall" {
		if err := recall(context.Background(), os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	ps, err := load("/usr/share/doc/python3.11/html", "scripts/eval/pages.txt")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if os.Args[1] == "-tune" {
		tune(ps)
		return
	}
	if os.Args[1] == "-answer" && len(os.Args) > 2 {
		r, err := research.New(research.Config{Search: research.NewLocal(corpus(ps), research.DefaultWeights), Fetch: webpage.New(webpage.Config{})})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		q, err := answer.ParseRequest(os.Args[2], true, "", "")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		res, err := r.Answer(context.Background(), q)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println(res.Answer)
		for i, s := range res.Sources {
			fmt.Printf("[%d] %s\n", i+1, s.URL)
		}
		return
	}
	n := 8
	if len(os.Args) > 2 {
		n, _ = strconv.Atoi(os.Args[2])
	}
	x := research.BuildIndex(ps, 0, research.DefaultWeights)
	fmt.Printf("%d passages; terms %q\n", x.Len(), research.Terms(os.Args[1]))
	for i, s := range x.Search(os.Args[1], n) {
		fmt.Printf("%2d %6.2f %s %q\n   %.200s\n", i+1, s.Score, s.URL, s.Heading, strings.ReplaceAll(s.Text, "\n", " | "))
	}
}

// load returns the passages of the pages listed in pagesFile (paths under
// root), each page's URL its path.
func load(root, pagesFile string) ([]answer.IndexedPassage, error) {
	docs, err := loadDocs(root, pagesFile)
	if err != nil {
		return nil, err
	}
	var ps []answer.IndexedPassage
	for _, d := range docs {
		for _, q := range answer.Passages(d) {
			ps = append(ps, answer.IndexedPassage{Passage: q, Title: d.Title, URL: d.URL})
		}
	}
	return ps, nil
}

// loadDocs reads the pages listed in pagesFile as documents to index
// (DocID and URL the page's path).
func loadDocs(root, pagesFile string) ([]answer.DocumentIndexed, error) {
	f, err := os.Open(pagesFile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var docs []answer.DocumentIndexed
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		page := strings.TrimSpace(sc.Text())
		if page == "" || strings.HasPrefix(page, "#") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, page))
		if err != nil {
			continue
		}
		p, err := webpage.Extract(webpage.Raw{URL: "http://127.0.0.1/" + page, ContentType: "text/html", Body: b})
		if err != nil {
			continue
		}
		docs = append(docs, answer.DocumentIndexed{DocID: page, URL: page, Origin: page, Title: p.Title, Sections: research.Sections(p)})
	}
	return docs, sc.Err()
}

// corpus is the pages' passages as a research.Corpus.
type corpus []answer.IndexedPassage

func (c corpus) Generation(context.Context) (uint64, error) { return 1, nil }
func (c corpus) Passages(context.Context) ([]answer.IndexedPassage, uint64, error) {
	return c, 1, nil
}

// tune prints retrieval recall on the tune questions for a grid of weights.
func tune(ps []answer.IndexedPassage) {
	b, err := os.ReadFile("scripts/eval/questions.json")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var qs []struct {
		Question, Split string
		Pages           []string
	}
	if err := json.Unmarshal(b, &qs); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, title := range []float64{1.5} {
		for _, heading := range []float64{2} {
			for _, term := range []float64{0, 0.5, 1, 2} {
				w := research.DefaultWeights
				w.Title, w.Heading, w.Section = title, heading, term
				x := research.BuildIndex(ps, 0, w)
				hit, n := 0, 0
				for _, q := range qs {
					if q.Split != "tune" {
						continue
					}
					n++
					pages := map[string]bool{}
					for _, s := range x.Search(q.Question, 5) {
						pages[s.URL] = true
					}
					for _, p := range q.Pages {
						if pages[p] {
							hit++
							break
						}
					}
				}
				fmt.Printf("title %.1f heading %.1f section %.1f: %d/%d\n", title, heading, term, hit, n)
			}
		}
	}
}
