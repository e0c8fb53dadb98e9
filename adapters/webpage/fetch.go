package webpage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/arr-dev/arr/adapters/netguard"
)

// Config configures a Fetcher.
type Config struct {
	// Timeout bounds one page, connect to last byte. Default 8s.
	Timeout time.Duration
	// MaxBytes is the most bytes read of one page. Default 2 MiB.
	MaxBytes int64
	// AllowPrivate lets the fetcher reach every address: the guard is off.
	AllowPrivate bool
	// Guard checks every address the fetcher connects to unless
	// AllowPrivate is set. Default netguard.New(netguard.Config{}).
	Guard *netguard.Guard
	// UserAgent is sent with every request.
	UserAgent string
}

// Fetcher fetches pages.
type Fetcher struct {
	cfg    Config
	client *http.Client
}

// Raw is a fetched page before extraction.
type Raw struct {
	// URL is the final URL, after redirects.
	URL         string
	ContentType string
	Body        []byte
	Truncated   bool
	// LastModified is the response's Last-Modified header, as sent.
	LastModified string
}

// ErrRefused: the page is not fetched (scheme, address, content type or
// status).
var ErrRefused = errors.New("page refused")

// New returns a Fetcher.
func New(cfg Config) *Fetcher {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 8 * time.Second
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = 2 << 20
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = "arr-answer/1 (+https://github.com/arr-dev/arr)"
	}
	d := &net.Dialer{Timeout: cfg.Timeout}
	if !cfg.AllowPrivate {
		if cfg.Guard == nil {
			cfg.Guard = netguard.New(netguard.Config{})
		}
		d.Control = refuseNonPublic(cfg.Guard)
	}
	// Proxy stays nil: through a proxy the dialer would check the proxy's
	// address, not the page's.
	tr := &http.Transport{
		DialContext: d.DialContext, ForceAttemptHTTP2: true, MaxIdleConnsPerHost: 4,
		IdleConnTimeout: 30 * time.Second, TLSHandshakeTimeout: cfg.Timeout, ResponseHeaderTimeout: cfg.Timeout,
	}
	return &Fetcher{cfg: cfg, client: &http.Client{Transport: tr, Timeout: cfg.Timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 5 {
				return fmt.Errorf("more than 5 redirects: %w", ErrRefused)
			}
			if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
				return fmt.Errorf("redirect to %s: %w", req.URL.Scheme, ErrRefused)
			}
			return nil
		}}}
}

// refuseNonPublic is the dialer's check of every resolved address it
// connects to, after DNS and after every redirect.
func refuseNonPublic(g *netguard.Guard) func(network, address string, c syscall.RawConn) error {
	return func(network, address string, c syscall.RawConn) error {
		if err := g.Control(network, address, c); err != nil {
			return fmt.Errorf("%w (set ARR_ANSWER_FETCH_PRIVATE=allow to reach it): %w", err, ErrRefused)
		}
		return nil
	}
}

// Response is one HTTP response as Get read it, whatever its status and
// content type.
type Response struct {
	// URL is the final URL, after redirects.
	URL    string
	Status int
	// ContentType is the media type without parameters, lower case; empty
	// when the server sent none.
	ContentType string
	// Body is nil unless the status is 2xx and Get was asked for it; at
	// most MaxBytes.
	Body      []byte
	Truncated bool
	// LastModified is the Last-Modified header, as sent ("" when none).
	LastModified string
}

// Fetch gets one page: status 200 and a Readable content type, or an error
// that matches ErrRefused.
func (f *Fetcher) Fetch(ctx context.Context, rawURL string) (Raw, error) {
	r, err := f.Get(ctx, rawURL, Readable)
	if err != nil {
		return Raw{}, err
	}
	if r.Status != http.StatusOK {
		return Raw{}, fmt.Errorf("fetching %s: status %d: %w", rawURL, r.Status, ErrRefused)
	}
	if !Readable(r.ContentType) {
		return Raw{}, fmt.Errorf("fetching %s: content type %q: %w", rawURL, r.ContentType, ErrRefused)
	}
	return Raw{URL: r.URL, ContentType: r.ContentType, Body: r.Body, Truncated: r.Truncated, LastModified: r.LastModified}, nil
}

// Get sends one GET, with the same bounds as Fetch (timeout, redirects,
// the address guard), and returns the response whatever its status and
// content type. The body is read, up to MaxBytes, only when the status is
// 2xx and wantBody (nil: always) accepts the content type; otherwise the
// connection is closed unread. The error is for a request that got no
// response.
func (f *Fetcher) Get(ctx context.Context, rawURL string, wantBody func(contentType string) bool) (Response, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Response{}, fmt.Errorf("%q is not an absolute http(s) URL: %w", rawURL, ErrRefused)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return Response{}, fmt.Errorf("fetching %s: %w", rawURL, err)
	}
	req.Header.Set("User-Agent", f.cfg.UserAgent)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,text/plain;q=0.8,application/xml;q=0.5,*/*;q=0.1")
	resp, err := f.client.Do(req)
	if err != nil {
		return Response{}, fmt.Errorf("fetching %s: %w", rawURL, err)
	}
	defer resp.Body.Close()
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	r := Response{URL: resp.Request.URL.String(), Status: resp.StatusCode, ContentType: strings.ToLower(ct), LastModified: resp.Header.Get("Last-Modified")}
	if resp.StatusCode < 200 || resp.StatusCode > 299 || (wantBody != nil && !wantBody(r.ContentType)) {
		return r, nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, f.cfg.MaxBytes+1))
	if err != nil {
		return Response{}, fmt.Errorf("reading %s: %w", rawURL, err)
	}
	r.Body = body
	if int64(len(body)) > f.cfg.MaxBytes {
		r.Body, r.Truncated = body[:f.cfg.MaxBytes], true
	}
	return r, nil
}

// Readable reports whether a media type is one the extractor reads.
func Readable(ct string) bool {
	ct = strings.ToLower(ct)
	return ct == "text/html" || ct == "application/xhtml+xml" || ct == "text/plain" || ct == "text/markdown"
}
