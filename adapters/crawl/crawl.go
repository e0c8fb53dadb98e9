package crawl

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/url"
	"strings"

	"github.com/arr-dev/arr/adapters/webpage"
)

// Getter fetches one URL; *webpage.Fetcher is one.
type Getter interface {
	Get(ctx context.Context, url string, wantBody func(contentType string) bool) (webpage.Response, error)
}

// Config configures a Crawler.
type Config struct {
	// Depth is how many links away from a seed the crawler goes: 0 visits
	// the seeds (and the URLs of a sitemap seed) only.
	Depth int
	// Limit is the most URLs visited in all, each yielding one Result.
	// Default 500.
	Limit int
	// SameSite keeps the crawl on each seed's site (scheme, host and port):
	// links and sitemap URLs elsewhere are not followed, and a page that
	// redirects elsewhere is skipped.
	SameSite bool
	// UserAgent is the name matched against robots.txt groups. Default
	// "arr".
	UserAgent string
	// MaxSitemaps bounds the sitemaps read, sitemap indexes included.
	// Default 100.
	MaxSitemaps int
}

func (c *Config) setDefaults() {
	if c.Limit == 0 {
		c.Limit = 500
	}
	if c.UserAgent == "" {
		c.UserAgent = "arr"
	}
	if c.MaxSitemaps == 0 {
		c.MaxSitemaps = 100
	}
}

// Validate reports every bad setting.
func (c Config) Validate() error {
	var errs []error
	if c.Depth < 0 {
		errs = append(errs, fmt.Errorf("crawl depth must be 0 or more, not %d", c.Depth))
	}
	if c.Limit < 0 {
		errs = append(errs, fmt.Errorf("crawl limit must be positive, not %d", c.Limit))
	}
	if c.MaxSitemaps < 0 {
		errs = append(errs, fmt.Errorf("crawl sitemap limit must be positive, not %d", c.MaxSitemaps))
	}
	return errors.Join(errs...)
}

// Crawler walks sites. Safe for concurrent use.
type Crawler struct {
	cfg Config
	get Getter
}

// New returns a Crawler that fetches through get.
func New(get Getter, cfg Config) (*Crawler, error) {
	if get == nil {
		return nil, errors.New("crawl: nil getter")
	}
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Crawler{cfg: cfg, get: get}, nil
}

// Outcome is what the crawler made of one URL.
type Outcome string

// The outcomes.
const (
	// Fetched: a readable page; the Result holds it.
	Fetched Outcome = "fetched"
	// Skipped: a URL found while crawling that is not for the index (not
	// a readable type, a redirect to another site or to a page already
	// visited); Err says why.
	Skipped Outcome = "skipped"
	// Failed: a URL that could not be fetched (robots.txt, an HTTP status,
	// the network), or a seed or sitemap URL that is not a readable page;
	// Err says why.
	Failed Outcome = "failed"
)

// Result is one URL visited.
type Result struct {
	// URL is the URL visited, in Canonical form.
	URL string
	// From is the page that linked to URL or the sitemap that listed it;
	// empty for a seed.
	From string
	// Depth is how many links URL is from its seed (a sitemap's URLs are
	// seeds).
	Depth   int
	Outcome Outcome
	// Err says why the URL was skipped or failed: ErrDisallowed, a
	// *StatusError, a *TypeError, or another reason.
	Err error
	// FinalURL is the page's URL after redirects, in Canonical form.
	FinalURL    string
	ContentType string
	Body        []byte
	Truncated   bool
	// LastModified is the page's Last-Modified header, as sent.
	LastModified string
	// Pending is how many URLs wait to be visited after this one.
	Pending int
}

// ErrDisallowed: robots.txt disallows the URL for the crawler's user
// agent.
var ErrDisallowed = errors.New("disallowed by robots.txt")

// StatusError is a response whose status is not 2xx.
type StatusError struct{ Status int }

func (e *StatusError) Error() string { return fmt.Sprintf("HTTP %d", e.Status) }

// TypeError is a response of a type the index cannot read.
type TypeError struct{ ContentType string }

func (e *TypeError) Error() string {
	if e.ContentType == "" {
		return "not a readable type: no Content-Type"
	}
	return "not a readable type: " + e.ContentType
}

// entry is a URL waiting to be visited.
type entry struct {
	url   string
	from  string
	depth int
	// site is the site of the seed it descends from.
	site string
	// requested: a seed or listed in a sitemap, so a page of a type the
	// index cannot read fails rather than being skipped.
	requested bool
	// maySitemap: a seed, so it may be a sitemap.
	maySitemap bool
	// sitemap: listed in a sitemap index.
	sitemap bool
}

// crawl is one Crawl's state.
type crawl struct {
	c       *Crawler
	robots  *robots
	queue   []entry
	pages   int // entries in queue that are not sitemaps
	current int // 1 while visiting a URL that will yield a Result
	seen    map[string]bool
	// read maps a URL whose page was read to the URL visited for it (they
	// differ after a redirect).
	read     map[string]string
	visited  int
	sitemaps int
}

// Crawl visits the seeds and what they lead to, breadth-first, and yields
// one Result per URL until the queue is empty, Limit URLs were visited,
// ctx ends or the caller stops. A seed that is not an absolute http(s) URL
// is a Failed Result.
func (c *Crawler) Crawl(ctx context.Context, seeds []string) iter.Seq[Result] {
	return func(yield func(Result) bool) {
		s := &crawl{c: c, robots: newRobots(c.get, c.cfg.UserAgent), seen: map[string]bool{}, read: map[string]string{}}
		emit := func(r Result) bool {
			s.visited++
			r.Pending = len(s.queue)
			return yield(r)
		}
		for _, raw := range seeds {
			u, err := Canonical(raw)
			if err != nil {
				if s.visited >= c.cfg.Limit || !emit(Result{URL: raw, Outcome: Failed, Err: err}) {
					return
				}
				continue
			}
			s.enqueue(entry{url: u, site: Site(u), requested: true, maySitemap: true})
		}
		for len(s.queue) > 0 && s.visited < c.cfg.Limit && ctx.Err() == nil {
			e := s.queue[0]
			s.queue = s.queue[1:]
			s.current = 1
			if !e.sitemap {
				s.pages--
			}
			r, ok := s.visit(ctx, e)
			s.current = 0
			if ok && !emit(r) {
				return
			}
		}
	}
}

// enqueue adds e unless it was seen or the limit is already spoken for.
func (s *crawl) enqueue(e entry) {
	if s.seen[e.url] || (!e.sitemap && s.visited+s.current+s.pages >= s.c.cfg.Limit) {
		return
	}
	s.seen[e.url] = true
	s.queue = append(s.queue, e)
	if !e.sitemap {
		s.pages++
	}
}

// visit fetches one URL; ok is false for a sitemap read (its URLs are
// queued instead).
func (s *crawl) visit(ctx context.Context, e entry) (Result, bool) {
	r := Result{URL: e.url, From: e.from, Depth: e.depth}
	fail := func(o Outcome, err error) (Result, bool) {
		r.Outcome, r.Err = o, err
		return r, true
	}
	if e.sitemap && s.sitemaps >= s.c.cfg.MaxSitemaps {
		return fail(Skipped, fmt.Errorf("more than %d sitemaps; this one is not read", s.c.cfg.MaxSitemaps))
	}
	if by, ok := s.read[e.url]; ok {
		return fail(Skipped, fmt.Errorf("read already: %s redirects to it", by))
	}
	if err := s.robots.check(ctx, e.url); err != nil {
		return fail(Failed, err)
	}
	var want func(string) bool // a sitemap listed in an index, whatever its type
	switch {
	case e.maySitemap && strings.HasSuffix(strings.ToLower(urlPath(e.url)), ".xml"):
	case e.maySitemap:
		want = func(ct string) bool { return webpage.Readable(ct) || isXML(ct) }
	case !e.sitemap:
		want = webpage.Readable
	}
	resp, err := s.c.get.Get(ctx, e.url, want)
	if err != nil {
		return fail(Failed, err)
	}
	final, err := Canonical(resp.URL)
	if err != nil {
		return fail(Failed, fmt.Errorf("redirected to %q: %w", resp.URL, err))
	}
	r.FinalURL = final
	if final != e.url {
		if s.c.cfg.SameSite && Site(final) != e.site {
			return fail(Skipped, fmt.Errorf("redirected to another site: %s", final))
		}
		if err := s.robots.check(ctx, final); err != nil {
			return fail(Failed, fmt.Errorf("redirected to %s, %w", final, err))
		}
		if by, ok := s.read[final]; ok {
			if by == final {
				return fail(Skipped, fmt.Errorf("redirected to %s, read already", final))
			}
			return fail(Skipped, fmt.Errorf("redirected to %s, read already from %s", final, by))
		}
		s.seen[final] = true
	}
	if resp.Status < 200 || resp.Status > 299 {
		return fail(Failed, &StatusError{Status: resp.Status})
	}
	s.read[e.url], s.read[final] = e.url, e.url
	r.ContentType, r.Body, r.Truncated, r.LastModified = resp.ContentType, resp.Body, resp.Truncated, resp.LastModified
	if e.maySitemap || e.sitemap {
		path := strings.ToLower(urlPath(final))
		if isXML(resp.ContentType) || strings.HasSuffix(path, ".xml") || e.sitemap {
			sm, err := parseSitemap(resp.Body)
			switch {
			case err == nil:
				s.sitemaps++
				s.current = 0 // a sitemap yields no Result of its own
				s.queueSitemap(e, final, sm)
				return Result{}, false
			case e.sitemap || !webpage.Readable(resp.ContentType):
				return fail(Failed, err)
			}
		}
	}
	if !webpage.Readable(resp.ContentType) {
		if e.requested {
			return fail(Failed, &TypeError{ContentType: resp.ContentType})
		}
		return fail(Skipped, &TypeError{ContentType: resp.ContentType})
	}
	r.Outcome = Fetched
	if e.depth < s.c.cfg.Depth && isHTML(resp.ContentType) {
		base, _ := url.Parse(final) // final is Canonical, so it parses
		for _, link := range Links(base, resp.Body) {
			if s.c.cfg.SameSite && Site(link) != e.site {
				continue
			}
			s.enqueue(entry{url: link, from: final, depth: e.depth + 1, site: e.site})
		}
	}
	return r, true
}

// queueSitemap queues a sitemap's URLs as seeds, or a sitemap index's
// sitemaps.
func (s *crawl) queueSitemap(e entry, from string, sm sitemap) {
	for _, loc := range sm.locs {
		u, err := Canonical(loc)
		if err != nil || (s.c.cfg.SameSite && Site(u) != e.site) {
			continue // the sitemap protocol allows only URLs of the sitemap's site
		}
		s.enqueue(entry{url: u, from: from, site: e.site, requested: !sm.index, sitemap: sm.index})
	}
}

func isXML(ct string) bool {
	return ct == "application/xml" || ct == "text/xml" || (strings.HasSuffix(ct, "+xml") && ct != "application/xhtml+xml")
}

func isHTML(ct string) bool { return ct == "text/html" || ct == "application/xhtml+xml" }

func urlPath(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Path
}
