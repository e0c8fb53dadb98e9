package answerapi

import (
	"context"
	"testing"
	"time"

	"github.com/arr-dev/arr/domain/answer"
)

// TestResolutionsKept: a follow-up's resolution is asked once per
// question and turns within resolutionTTL; other turns are another key.
func TestResolutionsKept(t *testing.T) {
	r := newResolutions(10)
	calls := 0
	resolve := func(_ context.Context, q string, _ []answer.Message) (string, string) {
		calls++
		return q + " (resolved)", "llm"
	}
	now := time.Date(2026, 12, 8, 0, 0, 0, 0, time.UTC)
	turns := []answer.Message{{Role: "user", Content: "the north pier lighthouse"}}
	for i := 0; i < 3; i++ {
		if q, by := r.resolve(context.Background(), now, "What powers it?", turns, resolve); q != "What powers it? (resolved)" || by != "llm" {
			t.Fatalf("%q %q", q, by)
		}
	}
	if calls != 1 {
		t.Fatalf("%d resolutions asked for one follow-up", calls)
	}
	r.resolve(context.Background(), now, "What powers it?", []answer.Message{{Role: "user", Content: "the south pier"}}, resolve)
	r.resolve(context.Background(), now.Add(resolutionTTL), "What powers it?", turns, resolve)
	if calls != 3 {
		t.Fatalf("%d resolutions: other turns and an expired one must be asked again", calls)
	}
}
