// Package websearch holds the web search backends of the answer service
// that call a search engine over HTTP: SearXNG (its JSON API) and Brave
// (the Web Search API). Both return Hits; failures wrap
// domain.ErrUnavailable, so the answer service answers 503 with
// Retry-After. Clients are safe for concurrent use.
package websearch
