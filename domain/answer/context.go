package answer

import (
	"strings"

	"github.com/arr-dev/arr/domain"
)

// ContextSize is how many sources an answer reads, relative to what its
// tier and mode read: the Sonar-compatible route's
// web_search_options.search_context_size.
type ContextSize string

// Context sizes. The zero value is Medium.
const (
	// ContextLow reads about half the sources (at least 2).
	ContextLow ContextSize = "low"
	// ContextMedium reads the tier's and mode's sources (the default).
	ContextMedium ContextSize = "medium"
	// ContextHigh reads half as many again.
	ContextHigh ContextSize = "high"
)

// ParseContextSize validates a search_context_size ("" is medium); the
// error names field.
func ParseContextSize(field, s string) (ContextSize, error) {
	switch ContextSize(strings.TrimSpace(s)) {
	case "", ContextMedium:
		return ContextMedium, nil
	case ContextLow:
		return ContextLow, nil
	case ContextHigh:
		return ContextHigh, nil
	}
	return "", domain.Invalid("invalid_search_context_size", field, "%s must be low, medium or high; got %q", field, s)
}

// Sources is how many sources a request of this context size reads when
// its tier and mode read n.
func (c ContextSize) Sources(n int) int {
	switch c {
	case ContextLow:
		return max(2, (n+1)/2)
	case ContextHigh:
		return n + n/2
	}
	return n
}

// key is the context size's part of a cache key: "" for medium, so an
// answer asked without one shares the entry.
func (c ContextSize) key() string {
	if c == "" || c == ContextMedium {
		return ""
	}
	return "\x00ctx=" + string(c)
}
