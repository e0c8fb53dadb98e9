package answer_test

import (
	"testing"

	"github.com/arr-dev/arr/domain/answer"
)

// TestContextSize: low reads about half (at least 2), medium as many, high
// half as many again; medium (or none) keeps the cache key of a request
// that names no context size, the others change it.
func TestContextSize(t *testing.T) {
	for _, c := range []struct {
		size    answer.ContextSize
		n, want int
	}{{answer.ContextLow, 5, 3}, {answer.ContextLow, 3, 2}, {answer.ContextLow, 14, 7}, {answer.ContextMedium, 5, 5}, {"", 8, 8},
		{answer.ContextHigh, 5, 7}, {answer.ContextHigh, 14, 21}} {
		if got := c.size.Sources(c.n); got != c.want {
			t.Errorf("%q.Sources(%d) = %d, want %d", c.size, c.n, got, c.want)
		}
	}
	req, err := answer.ParseRequest("what powers the lamp", true, "", "")
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]answer.ContextSize{}
	for _, s := range []answer.ContextSize{"", answer.ContextMedium, answer.ContextLow, answer.ContextHigh} {
		r := req
		r.ContextSize = s
		keys[r.CacheKey()] = s
	}
	if len(keys) != 3 || keys[req.CacheKey()] == answer.ContextLow || keys[req.CacheKey()] == answer.ContextHigh {
		t.Fatalf("cache keys %v", keys)
	}
	for in, want := range map[string]answer.ContextSize{"": answer.ContextMedium, "low": answer.ContextLow, " high ": answer.ContextHigh} {
		if got, err := answer.ParseContextSize("f", in); err != nil || got != want {
			t.Errorf("ParseContextSize(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := answer.ParseContextSize("web_search_options.search_context_size", "LOW"); err == nil {
		t.Fatal("LOW accepted")
	}
}
