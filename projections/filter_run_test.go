package projections_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain/feedback"
	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/projections"
)

// TestFilteredBatchOnlyAdvances: events of types a filtering projection
// does not handle move its checkpoint without applying anything; a handled event after them is applied as usual; logstats,
// which does not filter, applies everything.
func TestFilteredBatchOnlyAdvances(t *testing.T) {
	ctx := context.Background()
	pool, st, r := setup(t, projections.TierQuality{}, projections.LogStats{})
	last := appendN(t, st, "tick-1", 150)
	checkpoint := func(name string) uint64 {
		t.Helper()
		var pos int64
		if err := pool.QueryRow(ctx, `SELECT position FROM projection_checkpoints WHERE name = $1`, name).Scan(&pos); err != nil {
			t.Fatal(err)
		}
		return uint64(pos)
	}
	ratings := func() int64 {
		t.Helper()
		var n int64
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM rm_tier_quality.ratings`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// The PostgreSQL store reads only FeedbackSubmitted events for it:
	// one step finds none and moves the checkpoint to the head.
	pos, n, err := r.Step(ctx, "tier_quality")
	if err != nil {
		t.Fatal(err)
	}
	if n != 0 || pos != last {
		t.Fatalf("step over 150 unhandled events: %d applied, at %d; want 0 applied, at %d", n, pos, last)
	}
	if got := checkpoint("tier_quality"); got != last {
		t.Fatalf("tier_quality checkpoint %d after 150 unhandled events, want %d", got, last)
	}
	if n := ratings(); n != 0 {
		t.Fatalf("unhandled events left %d ratings", n)
	}

	fb, _ := json.Marshal(feedback.FeedbackSubmitted{AuditHash: "ab", AccountID: uuid.New(), KeyID: uuid.New(), Tier: "small", Model: "m",
		Difficulty: 0.4, Rating: 1, SubmittedAt: time.Now().UTC()})
	res, err := st.Append(ctx, "feedback-1", eventstore.Any(), eventstore.NewEvent{ID: uuid.New(), Type: feedback.FeedbackSubmitted{}.EventType(), SchemaVersion: 1, Data: fb})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.WaitFor(ctx, "tier_quality", res.LastPosition); err != nil {
		t.Fatal(err)
	}
	if n := ratings(); n != 1 {
		t.Fatalf("after a FeedbackSubmitted: %d ratings, want 1", n)
	}
	if err := r.WaitFor(ctx, "logstats", res.LastPosition); err != nil {
		t.Fatal(err)
	}
	if n := count(t, pool); n != 151 {
		t.Fatalf("logstats counted %d events, want all 151", n)
	}
}
