package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/arr-dev/arr/domain/answer"
)

// corpus serves the documentation's HTML directory on a loopback port and
// reads pages back from it as text. Safe for concurrent use.
type corpus struct {
	dir    string
	base   *url.URL
	srv    *http.Server
	client *http.Client
	norm   *normalizer

	// seeded maps the answer service's /docs/{doc_id} paths of arr's
	// seeded reference documents to their page (-seeded), on host
	// seededHost; nil otherwise.
	seeded     map[string]string
	seededHost string

	mu    sync.Mutex
	texts map[string]string // page path -> normalized text
}

// serveCorpus starts an http.FileServer over dir on 127.0.0.1:0.
func serveCorpus(dir string, norm *normalizer) (*corpus, error) {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("no documentation in %s (install python3.11-doc or git-doc): %v", dir, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening for the corpus server: %w", err)
	}
	c := &corpus{dir: dir, norm: norm, texts: map[string]string{},
		base:   &url.URL{Scheme: "http", Host: ln.Addr().String(), Path: "/"},
		srv:    &http.Server{Handler: http.FileServer(http.Dir(dir)), ReadHeaderTimeout: 10 * time.Second},
		client: &http.Client{Timeout: 30 * time.Second}}
	go func() { _ = c.srv.Serve(ln) }()
	return c, nil
}

// close stops the server.
func (c *corpus) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = c.srv.Shutdown(ctx)
}

// url is the served URL of a page path.
func (c *corpus) url(page string) string {
	return c.base.ResolveReference(&url.URL{Path: page}).String()
}

// pagePath is the page path of a URL: its path without the leading slash,
// fragment and query ignored; ok is false for a URL not on this server.
func (c *corpus) pagePath(raw string) (p string, ok bool) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", false
	}
	if page, found := c.seeded[u.Path]; found && u.Host == c.seededHost {
		return page, true
	}
	return strings.TrimPrefix(path.Clean("/"+u.Path), "/"), u.Scheme == c.base.Scheme && u.Host == c.base.Host
}

// text fetches a page of this server and returns its normalized text.
func (c *corpus) text(ctx context.Context, page string) (string, error) {
	c.mu.Lock()
	t, ok := c.texts[page]
	c.mu.Unlock()
	if ok {
		return t, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url(page), nil)
	if err != nil {
		return "", fmt.Errorf("fetching %s: %w", page, err)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return "", fmt.Errorf("fetching %s: %w", page, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", page, err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("fetching %s: status %d", page, resp.StatusCode)
	}
	if strings.HasSuffix(page, ".md") {
		t = c.norm.text(c.norm.markdownText(b))
	} else {
		t = c.norm.text(c.norm.htmlText(b))
	}
	c.mu.Lock()
	c.texts[page] = t
	c.mu.Unlock()
	return t, nil
}

// seedDocs makes the answer service at base cite the pages (arr's
// reference documents, docs/NAME.md seeded as origin "docs/NAME.md") by
// their page path: it serves them at /docs/{answer.DocID(origin)}.
func (c *corpus) seedDocs(base string, pages []string) error {
	u, err := url.Parse(base)
	if err != nil {
		return fmt.Errorf("parsing the answer service's URL: %w", err)
	}
	c.seeded, c.seededHost = map[string]string{}, u.Host
	for _, p := range pages {
		c.seeded[answer.DocsPath(answer.DocID(path.Join("docs", p)))] = p
	}
	return nil
}

// loadPages reads the page list: one path under the HTML root a line,
// blank lines and # comments skipped. Every page must exist, once.
func loadPages(file, dir string) ([]string, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("reading the page list: %w", err)
	}
	defer f.Close()
	var pages []string
	var errs []error
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		p := strings.TrimSpace(sc.Text())
		if p == "" || strings.HasPrefix(p, "#") {
			continue
		}
		if seen[p] {
			errs = append(errs, fmt.Errorf("%s: listed twice", p))
			continue
		}
		seen[p] = true
		if st, err := os.Stat(filepath.Join(dir, filepath.FromSlash(p))); err != nil || st.IsDir() {
			errs = append(errs, fmt.Errorf("%s: not a page under %s", p, dir))
			continue
		}
		pages = append(pages, p)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", file, err)
	}
	return pages, errors.Join(errs...)
}

// checkQuestions verifies every question against the corpus: each page it
// names is in the page list and states the fact (one alternative matches
// the page's text); each wrong statement is on a listed page; for an
// unanswerable question, no listed page matches an absent pattern. With
// show, it prints where each fact was found.
func checkQuestions(ctx context.Context, c *corpus, qs []question, pages []string, show io.Writer) error {
	listed := map[string]bool{}
	for _, p := range pages {
		listed[p] = true
	}
	var errs []error
	var all map[string]string // every listed page's text, read when needed
	texts := func() (map[string]string, error) {
		if all != nil {
			return all, nil
		}
		m := map[string]string{}
		for _, p := range pages {
			t, err := c.text(ctx, p)
			if err != nil {
				return nil, err
			}
			m[p] = t
		}
		all = m
		return all, nil
	}
	for _, q := range qs {
		for _, p := range q.Pages {
			if !listed[p] {
				errs = append(errs, fmt.Errorf("%s: page %s is not in the page list", q.ID, p))
				continue
			}
			if q.unanswerable() {
				continue
			}
			t, err := c.text(ctx, p)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", q.ID, err))
				continue
			}
			alt := q.matches(t)
			if alt < 0 {
				errs = append(errs, fmt.Errorf("%s: no fact alternative matches the text of %s", q.ID, p))
				continue
			}
			if show != nil {
				fmt.Fprintf(show, "%s %s: %s\n", q.ID, p, q.alts[alt][0].context(t, 100))
			}
		}
		if len(q.wrong) == 0 && len(q.absent) == 0 {
			continue
		}
		m, err := texts()
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", q.ID, err))
			continue
		}
		for _, e := range checkAgainst(q, pages, m) {
			errs = append(errs, fmt.Errorf("%s: %s", q.ID, e))
		}
		for _, e := range wrongInFactSentence(q, m) {
			errs = append(errs, fmt.Errorf("%s: %s", q.ID, e))
		}
	}
	return errors.Join(errs...)
}

// wrongInFactSentence lists the wrong statements of q that match the
// fact's own sentence on one of its pages, within 30 characters of the
// fact (a flattened table is one long "sentence" whose neighbouring rows
// are statements of their own): a statement the fact's own sentence
// makes is not another subject's.
func wrongInFactSentence(q question, texts map[string]string) []string {
	var bad []string
	for _, p := range q.Pages {
		t := texts[p]
		for _, alt := range q.alts {
			if !allMatch(alt, t) {
				continue
			}
			for _, m := range alt {
				i := m.find(t)
				sen := sentenceAt(t[max(0, i-30):min(len(t), i+len(m.lit)+30)], min(i, 30))
				if w := anyMatch(q.wrong, sen); w != "" {
					bad = append(bad, fmt.Sprintf("wrong statement %q is in the fact's own sentence on %s: %q", w, p, clip(sen, 200)))
				}
			}
		}
	}
	return bad
}

// sentenceAt is the sentence of text (". " separated) holding byte i. The
// caller clips text to a window around i: a flattened table is one long
// "sentence" whose rows are statements of their own.
func sentenceAt(text string, i int) string {
	if i < 0 {
		return ""
	}
	start := strings.LastIndex(text[:i], ". ")
	if start < 0 {
		start = 0
	} else {
		start += 2
	}
	end := strings.Index(text[i:], ". ")
	if end < 0 {
		return text[start:]
	}
	return text[start : i+end+1]
}

// checkAgainst checks q's wrong statements (each on some page) and absent
// patterns (none on any page) against the pages' normalized texts.
func checkAgainst(q question, pages []string, texts map[string]string) []string {
	var bad []string
	for _, w := range q.wrong {
		found := false
		for _, p := range pages {
			found = found || w.match(texts[p])
		}
		if !found {
			bad = append(bad, fmt.Sprintf("wrong statement %q is on no listed page", w.src))
		}
	}
	for _, a := range q.absent {
		for _, p := range pages {
			if a.match(texts[p]) {
				bad = append(bad, fmt.Sprintf("absent pattern %q matches %s: %s", a.src, p, a.context(texts[p], 80)))
			}
		}
	}
	return bad
}
