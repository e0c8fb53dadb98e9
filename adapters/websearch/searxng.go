package websearch

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// SearXNG queries a SearXNG instance through its JSON API
// (GET {base}/search?q=…&format=json). The instance must allow the json
// format (search.formats in its settings.yml).
type SearXNG struct {
	base   string
	client *http.Client
}

// NewSearXNG returns a client of the instance at baseURL; timeout bounds
// one query (default 10s).
func NewSearXNG(baseURL string, timeout time.Duration) (*SearXNG, error) {
	u, err := url.Parse(strings.TrimRight(baseURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("SEARXNG_URL must be an absolute http(s) URL, got %q: %w", baseURL, ErrNotConfigured)
	}
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	return &SearXNG{base: u.String(), client: &http.Client{Timeout: timeout}}, nil
}

// Name implements the answer service's Searcher.
func (*SearXNG) Name() string { return "searxng" }

type searxngResponse struct {
	Results []struct {
		Title   string `json:"title"`
		URL     string `json:"url"`
		Content string `json:"content"`
	} `json:"results"`
}

// Search returns up to n hits for q.
func (s *SearXNG) Search(ctx context.Context, q string, n int) ([]Hit, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.base+"/search?"+url.Values{"q": {q}, "format": {"json"}}.Encode(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, unavailable("searxng", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, unavailable("searxng", fmt.Errorf("status %d", resp.StatusCode))
	}
	var body searxngResponse
	if err := json.NewDecoder(io.LimitReader(resp.Body, 4<<20)).Decode(&body); err != nil {
		return nil, unavailable("searxng", fmt.Errorf("decoding results: %w", err))
	}
	var out []Hit
	for _, r := range body.Results {
		if len(out) == n {
			break
		}
		if absolute(r.URL) {
			out = append(out, Hit{Title: strings.TrimSpace(r.Title), URL: r.URL, Snippet: strings.TrimSpace(r.Content)})
		}
	}
	return out, nil
}
