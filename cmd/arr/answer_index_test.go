package main_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
)

// loopSite is a web site on loopback that the test starts and changes; it
// counts the requests for each path and remembers the user agents.
type loopSite struct {
	srv    *httptest.Server
	mu     sync.Mutex
	pages  map[string]string
	hits   map[string]int
	agents map[string]bool
}

func newLoopSite(t testing.TB, pages map[string]string) *loopSite {
	t.Helper()
	s := &loopSite{pages: pages, hits: map[string]int{}, agents: map[string]bool{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve)) // 127.0.0.1
	t.Cleanup(s.srv.Close)
	return s
}

// serve: "/robots.txt" is text; ".xml" is XML; "/logo.png" is a PNG; a page
// "redirect:PATH" is a 301; any other page is an HTML article; a missing
// path is a 404.
func (s *loopSite) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.hits[r.URL.Path]++
	s.agents[r.UserAgent()] = true
	body, ok := s.pages[r.URL.Path]
	s.mu.Unlock()
	switch {
	case !ok:
		http.NotFound(w, r)
	case strings.HasPrefix(body, "redirect:"):
		http.Redirect(w, r, strings.TrimPrefix(body, "redirect:"), http.StatusMovedPermanently)
	case r.URL.Path == "/robots.txt":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte(body))
	case strings.HasSuffix(r.URL.Path, ".xml"):
		w.Header().Set("Content-Type", "application/xml")
		_, _ = w.Write([]byte(strings.ReplaceAll(body, "SITE", s.srv.URL)))
	case strings.HasSuffix(r.URL.Path, ".png"):
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write([]byte(body))
	default:
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(body))
	}
}

func (s *loopSite) set(path, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pages[path] = body
}

func (s *loopSite) hit(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

// article is an HTML page: a title, paragraphs and links.
func article(title string, paras []string, links ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<!doctype html><html><head><title>%s</title></head><body><nav><ul>", title)
	for _, l := range links {
		fmt.Fprintf(&b, `<li><a href="%s">%s</a></li>`, l, l)
	}
	fmt.Fprintf(&b, "</ul></nav><article><h1>%s</h1>", title)
	for _, p := range paras {
		fmt.Fprintf(&b, "<p>%s</p>", p)
	}
	b.WriteString("</article></body></html>")
	return b.String()
}

// indexOutput is the --json output of arr answer index add.
type indexOutput struct {
	Results []struct {
		Item, Outcome, URL, From, Reason string
		DocID                            string `json:"doc_id"`
	} `json:"results"`
	Added, Updated, Unchanged, Skipped, Failed, Documents int
}

// indexAdd runs arr answer index add ARGS --json and decodes its output
// whatever the exit code, which it returns.
func indexAdd(t testing.TB, e *env, args ...string) (indexOutput, string, int) {
	t.Helper()
	out, errs, code := e.arr(append([]string{"answer", "index", "add", "--json"}, args...)...)
	var o indexOutput
	if err := json.Unmarshal([]byte(out), &o); err != nil {
		t.Fatalf("arr answer index add %v: exit %d, decoding %q: %v\nstderr: %s", args, code, out, err, errs)
	}
	return o, errs, code
}

// outcomes is "item outcome [url] [reason]" per result, sorted, with the
// site's base URL cut out.
func (o indexOutput) outcomes(base string) []string {
	var out []string
	for _, r := range o.Results {
		line := strings.TrimPrefix(r.Item, base) + " " + r.Outcome
		if r.URL != "" && r.URL != r.Item {
			line += " as " + strings.TrimPrefix(r.URL, base)
		}
		if r.Reason != "" {
			line += ": " + r.Reason
		}
		out = append(out, line)
	}
	sort.Strings(out)
	return out
}

func documentIndexedEvents(t testing.TB, e *env) int64 {
	t.Helper()
	var stats struct {
		Types []struct {
			Type   string `json:"type"`
			Events int64  `json:"events"`
		} `json:"types"`
	}
	e.mustArr(&stats, "events", "stats", "--json")
	for _, ty := range stats.Types {
		if ty.Type == "DocumentIndexed" {
			return ty.Events
		}
	}
	return 0
}

var (
	lampOld = []string{
		"The lamp of the north pier lighthouse burns paraffin.",
		"Every evening at dusk the keeper lights the paraffin lamp and trims its wick.",
		"A Fresnel lens gathers the flame into a beam that ships see twenty miles out.",
	}
	lampNew = []string{
		"The lamp of the north pier lighthouse is powered by a solar-charged battery since 2019.",
		"A light sensor switches the electric lamp on at dusk, and no keeper climbs the tower any more.",
		"A Fresnel lens gathers the light into a beam that ships see twenty miles out.",
	}
)

// TestAnswerIndexCrawl: arr answer index add crawls a loopback site the
// test starts (robots.txt, a redirect, a broken link, a PNG, pages three
// levels deep, a link to another site), re-adds a changed page and an
// unchanged one, adds a folder and a sitemap, and the answer service
// answers from what was indexed, a fact only a table states and a
// sentence that needs the one before it included. Every request goes to 127.0.0.1.
func TestAnswerIndexCrawl(t *testing.T) {
	other := newLoopSite(t, map[string]string{"/": article("Elsewhere", []string{"A page on another site that the crawl must not reach."})})
	site := newLoopSite(t, map[string]string{
		"/robots.txt": "User-agent: *\nDisallow: /private/\n",
		"/": article("Harbour Light Museum", []string{
			"Welcome to the Harbour Light Museum, which tells the story of the north pier lighthouse.",
			"The museum collects the logbooks of the families who kept the light for a century.",
		}, "/guide", "/private/keys", "/old", "/broken", "/logo.png", "/#visit", "mailto:curator@example.com", "javascript:void(0)", other.srv.URL+"/"),
		"/guide":               article("Lamp guide", lampOld, "/guide/advanced", "/"),
		"/guide/advanced":      article("Lens maintenance", []string{"The Fresnel lens is polished with chamois leather every Monday.", "Its brass frame is oiled twice a year."}, "/guide/advanced/deep"),
		"/guide/advanced/deep": article("Too deep", []string{"This page is three links from the start and must not be fetched."}),
		"/private/keys":        article("Keys", []string{"The key cabinet is in the keeper's cottage."}),
		"/old":                 "redirect:/visiting",
		"/visiting":            article("Visiting hours", []string{"The tower is open to visitors from ten in the morning until four in the afternoon.", "Tickets are sold at the museum door."}),
		"/logo.png":            "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
		"/sitemap.xml": `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<url><loc>SITE/ferry</loc></url><url><loc>SITE/tides</loc></url><url><loc>SITE/private/listed</loc></url>
</urlset>`,
		"/ferry":          article("Ferry timetable", []string{"The island ferry leaves the north pier at nine and at three every day.", "The crossing takes forty minutes."}),
		"/tides":          article("Tide tables", []string{"High water at the north pier comes about fifty minutes later each day.", "Spring tides follow the new and the full moon."}),
		"/private/listed": article("Listed", []string{"Disallowed even when a sitemap lists it."}),
		// Linked from nowhere: added by URL below.
		"/signals": `<!doctype html><html><head><title>Harbour signals</title></head><body><article><h1>Harbour signals</h1>
<p>The harbour master signals to boats with the pier horn.</p>
<table><thead><tr><th>Signal</th><th>Meaning</th></tr></thead><tbody>
<tr><td>One long blast</td><td>A ship is leaving the inner basin</td></tr>
<tr><td>Three short blasts</td><td>The harbour mouth is closed to small boats until further notice</td></tr>
</tbody></table></article></body></html>`,
		"/bells": article("Bell history", []string{
			"The lighthouse has hung two bells over its history.",
			"The first was cast in Leith and cracked in a frost in 1880.",
			"The second was cast in Whitechapel in 1884 from the metal of the first. This is the bell that visitors can ring at the end of the tour.",
		}),
	})
	base := site.srv.URL

	e := newEnv(t)
	e.extraEnv = append(e.extraEnv, "ARR_ANSWER_FETCH_PRIVATE=allow", "ARR_ANSWER_SEED=off")
	e.up()
	e.createAccount("crawl@example.com", "free")
	key := e.mint("crawl@example.com", "answer").Secret

	// The crawl: depth 2 from the home page.
	o, stderr, code := indexAdd(t, e, base+"/", "--crawl", "--depth", "2")
	want := []string{
		"/ added",
		"/broken failed: HTTP 404",
		"/guide added",
		"/guide/advanced added",
		"/logo.png skipped: not a readable type: image/png",
		"/old added as /visiting",
		"/private/keys failed: disallowed by robots.txt",
	}
	if got := o.outcomes(base); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("crawl outcomes:\n got %q\nwant %q\nstderr: %s", got, want, stderr)
	}
	if code != 1 || o.Added != 4 || o.Failed != 2 || o.Skipped != 1 || o.Documents != 4 {
		t.Fatalf("exit %d, counts %+v", code, o)
	}
	for _, r := range o.Results {
		if r.Item == base+"/broken" && r.From != base+"/" {
			t.Errorf("the broken link's page: %q", r.From)
		}
	}
	if n := site.hit("/guide/advanced/deep"); n != 0 {
		t.Errorf("depth 3 fetched %d times", n)
	}
	if n := site.hit("/private/keys"); n != 0 {
		t.Errorf("the page robots.txt disallows was fetched %d times", n)
	}
	if n := site.hit("/robots.txt"); n != 1 {
		t.Errorf("robots.txt fetched %d times, want once", n)
	}
	if n := other.hit("/"); n != 0 {
		t.Errorf("the crawl left the site: the other site served %d requests", n)
	}
	for ua := range site.agents {
		if !strings.HasPrefix(ua, "arr/") {
			t.Errorf("user agent %q", ua)
		}
	}
	if !strings.Contains(stderr, "indexing: done, 7 items") {
		t.Errorf("no progress on stderr: %q", stderr)
	}

	q := map[string]string{"q": "What powers the lamp of the north pier lighthouse?"}
	status, _, a := askAnswer(t, "GET", e.answer, key, q)
	if status != 200 || !strings.Contains(a.Answer, "paraffin") {
		t.Fatalf("before the change: %d %+v", status, a)
	}
	assertCited(t, a)

	// The page changes: re-adding it updates the document in place, and the
	// next answer says what the page says now.
	site.set("/guide", article("Lamp guide", lampNew, "/guide/advanced", "/"))
	before := documentIndexedEvents(t, e)
	o, _, code = indexAdd(t, e, base+"/guide")
	if got := o.outcomes(base); code != 0 || len(got) != 1 || got[0] != "/guide updated" || o.Added != 0 || o.Updated != 1 || o.Documents != 4 {
		t.Fatalf("re-adding a changed page: exit %d %q %+v", code, got, o)
	}
	status, _, a = askAnswer(t, "GET", e.answer, key, q)
	if status != 200 || !strings.Contains(a.Answer, "solar-charged battery") || strings.Contains(a.Answer, "paraffin") {
		t.Fatalf("after the change: %d %+v", status, a)
	}
	assertCited(t, a)
	if after := documentIndexedEvents(t, e); after != before+1 {
		t.Fatalf("DocumentIndexed events %d → %d, want one more", before, after)
	}

	// Unchanged: nothing is recorded.
	o, _, code = indexAdd(t, e, base+"/guide", base+"/old")
	if got := o.outcomes(base); code != 0 || strings.Join(got, "|") != "/guide unchanged|/old unchanged as /visiting" || o.Unchanged != 2 {
		t.Fatalf("re-adding unchanged pages: exit %d %q", code, got)
	}
	if after := documentIndexedEvents(t, e); after != before+1 {
		t.Fatalf("re-adding unchanged pages recorded events: %d → %d", before+1, after)
	}

	// A folder: its Markdown file is served at the /docs/{id} URL an answer
	// cites it by.
	dir := t.TempDir()
	md := "# Fog signals\n\nThe fog horn on the north pier sounds twice every thirty seconds in fog.\n\nIt was installed in 1902 and blows compressed air.\n"
	if err := os.WriteFile(filepath.Join(dir, "fog.md"), []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "photo.png"), []byte("\x89PNG"), 0o644); err != nil {
		t.Fatal(err)
	}
	o, _, code = indexAdd(t, e, dir)
	if code != 0 || len(o.Results) != 1 || o.Results[0].Outcome != "added" || o.Added != 1 || o.Documents != 5 {
		t.Fatalf("adding a folder: exit %d %+v", code, o)
	}
	status, _, a = askAnswer(t, "GET", e.answer, key, map[string]string{"q": "How often does the fog horn on the north pier sound?"})
	if status != 200 {
		t.Fatalf("%d %+v", status, a)
	}
	assertCited(t, a)
	if want := e.answer + "/docs/" + o.Results[0].DocID; a.Sources[0].URL != want {
		t.Fatalf("cited %+v, want %s first", a.Sources, want)
	}
	if code, body := get(t, a.Sources[0].URL, nil); code != 200 || !strings.Contains(string(body), "compressed air") {
		t.Fatalf("GET %s: %d %s", a.Sources[0].URL, code, body)
	}

	// A sitemap: each <loc> is indexed, robots.txt still applies.
	o, _, code = indexAdd(t, e, base+"/sitemap.xml")
	want = []string{"/ferry added", "/private/listed failed: disallowed by robots.txt", "/tides added"}
	if got := o.outcomes(base); code != 1 || strings.Join(got, "\n") != strings.Join(want, "\n") || o.Added != 2 || o.Documents != 7 {
		t.Fatalf("sitemap: exit %d\n got %q\nwant %q", code, got, want)
	}
	for _, r := range o.Results {
		if r.From != base+"/sitemap.xml" {
			t.Errorf("%s: from %q, want the sitemap", r.Item, r.From)
		}
	}
	if n := site.hit("/private/listed"); n != 0 {
		t.Errorf("a disallowed sitemap URL was fetched %d times", n)
	}
	status, _, a = askAnswer(t, "GET", e.answer, key, map[string]string{"q": "When does the island ferry leave the north pier?"})
	if status != 200 || !strings.Contains(a.Answer, "nine and at three") {
		t.Fatalf("sitemap page not answered from: %d %+v", status, a)
	}

	// A fact that only a table states, and a sentence that needs the one
	// before it ("This is the bell ...").
	o, _, code = indexAdd(t, e, base+"/signals", base+"/bells")
	if code != 0 || o.Added != 2 {
		t.Fatalf("adding the table and bell pages: exit %d %+v", code, o)
	}
	status, _, a = askAnswer(t, "GET", e.answer, key, map[string]string{"q": "What do three short blasts of the pier horn mean?"})
	if status != 200 || !strings.Contains(a.Answer, "closed to small boats") || !strings.HasPrefix(a.Sources[0].URL, base+"/signals") {
		t.Fatalf("the table's fact: %d %+v", status, a)
	}
	assertCited(t, a)
	status, _, a = askAnswer(t, "GET", e.answer, key, map[string]string{"q": "Which bell can visitors ring at the end of the tour?"})
	if status != 200 || !strings.Contains(a.Answer, "The second was cast in Whitechapel in 1884 from the metal of the first. This is the bell") {
		t.Fatalf("the sentence before 'This is the bell': %d %+v", status, a)
	}
	assertCited(t, a)

	// The text report and a bad flag.
	out, _, code := e.arr("answer", "index", "add", base+"/tides", base+"/logo.png", base+"/", "--crawl", "--depth", "1")
	if code != 1 || !strings.Contains(out, "unchanged "+base+"/tides\n") || !strings.Contains(out, "failed    "+base+"/logo.png: not a readable type: image/png\n") ||
		!strings.Contains(out, "unchanged "+base+"/old (as "+base+"/visiting)\n") ||
		!strings.Contains(out, "failed    "+base+"/private/keys: disallowed by robots.txt (found on "+base+"/)\n") ||
		!strings.Contains(out, "failed    "+base+"/broken: HTTP 404 (found on "+base+"/)\n") ||
		!strings.Contains(out, "0 added, 0 updated, 4 unchanged, 0 skipped, 3 failed; the index holds 9 documents") {
		t.Fatalf("text report: exit %d\n%s", code, out)
	}
	if _, errs, code := e.arr("answer", "index", "add", base+"/", "--depth", "3"); code == 0 || !strings.Contains(errs, "--depth needs --crawl") {
		t.Fatalf("--depth without --crawl: exit %d %s", code, errs)
	}
}
