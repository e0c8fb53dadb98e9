package websearch

import (
	"errors"
	"fmt"
	"net/url"

	"github.com/arr-dev/arr/domain"
)

// Hit is one search result.
type Hit struct {
	Title string
	// URL is absolute.
	URL     string
	Snippet string
	// Content is the document's full text when the backend holds it (the
	// local index); empty when the page must be fetched.
	Content string
}

// ErrNotConfigured: the backend lacks a setting it needs.
var ErrNotConfigured = errors.New("search backend not configured")

// unavailable wraps a failure to reach a backend as domain.ErrUnavailable.
func unavailable(backend string, err error) error {
	return fmt.Errorf("%s search: %w: %w", backend, domain.ErrUnavailable, err)
}

// absolute reports whether u is an absolute http(s) URL.
func absolute(u string) bool {
	p, err := url.Parse(u)
	return err == nil && (p.Scheme == "http" || p.Scheme == "https") && p.Host != ""
}
