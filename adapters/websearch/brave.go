package websearch

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// DefaultBraveBase is the Brave Search API.
const DefaultBraveBase = "https://api.search.brave.com"

// Brave queries the Brave Web Search API
// (GET {base}/res/v1/web/search, header X-Subscription-Token).
type Brave struct {
	base, key string
	client    *http.Client
}

// NewBrave returns a Brave client; base "" is DefaultBraveBase, timeout 0
// is 10s.
func NewBrave(base, apiKey string, timeout time.Duration) (*Brave, error) {
	if apiKey == "" {
		return nil, fmt.Errorf("ARR_SEARCH=brave needs BRAVE_API_KEY: %w", ErrNotConfigured)
	}
	if base == "" {
		base = DefaultBraveBase
	}
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	return &Brave{base: strings.TrimRight(base, "/"), key: apiKey, client: &http.Client{Timeout: timeout}}, nil
}

// Name implements the answer service's Searcher.
func (*Brave) Name() string { return "brave" }

type braveResponse struct {
	Web struct {
		Results []struct {
			Title       string `json:"title"`
			URL         string `json:"url"`
			Description string `json:"description"`
		} `json:"results"`
	} `json:"web"`
}

// Search returns up to n (at most 20) hits for q.
func (b *Brave) Search(ctx context.Context, q string, n int) ([]Hit, error) {
	count := min(max(n, 1), 20)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.base+"/res/v1/web/search?"+url.Values{"q": {q}, "count": {strconv.Itoa(count)}}.Encode(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("X-Subscription-Token", b.key)
	resp, err := b.client.Do(req)
	if err != nil {
		return nil, unavailable("brave", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, unavailable("brave", fmt.Errorf("status %d", resp.StatusCode))
	}
	var body braveResponse
	if err := json.NewDecoder(io.LimitReader(resp.Body, 4<<20)).Decode(&body); err != nil {
		return nil, unavailable("brave", fmt.Errorf("decoding results: %w", err))
	}
	var out []Hit
	for _, r := range body.Web.Results {
		if len(out) == n {
			break
		}
		if absolute(r.URL) {
			out = append(out, Hit{Title: stripTags(r.Title), URL: r.URL, Snippet: stripTags(r.Description)})
		}
	}
	return out, nil
}

// stripTags removes the <strong> highlighting Brave puts in titles and
// descriptions.
func stripTags(s string) string {
	var b strings.Builder
	in := false
	for _, r := range s {
		switch {
		case r == '<':
			in = true
		case r == '>':
			in = false
		case !in:
			b.WriteRune(r)
		}
	}
	return strings.TrimSpace(b.String())
}
