package projections_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/arr-dev/arr/projections/logstats"
	"github.com/arr-dev/arr/projections/tierquality"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain/feedback"
	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/projections"
)

// plainStore is the PostgreSQL store without its typed reads, as a store
// that has none (KurrentDB) is to the runner.
type plainStore struct{ eventstore.Store }

// TestFilteredBatchOnlyAdvances: events of types a filtering projection
// does not handle move its checkpoint without applying anything, whether
// the store filters them (TypeReader) or the runner does; a handled event
// after them is applied as usual; logstats, which does not filter, applies
// everything.
func TestFilteredBatchOnlyAdvances(t *testing.T) {
	for _, tc := range []struct {
		name  string
		typed bool
		steps int // to pass 150 unhandled events in batches of 100
	}{{"store filters", true, 1}, {"runner filters", false, 2}} {
		t.Run(tc.name, func(t *testing.T) { testFilteredBatchOnlyAdvances(t, tc.typed, tc.steps) })
	}
}

func testFilteredBatchOnlyAdvances(t *testing.T, typed bool, steps int) {
	ctx := context.Background()
	pool, st, r := setup(t, tierquality.Projection{}, logstats.Projection{})
	if !typed {
		var err error
		if r, err = projections.NewRunner(pool, plainStore{st}, projections.Config{BatchSize: 100}, tierquality.Projection{}, logstats.Projection{}); err != nil {
			t.Fatal(err)
		}
	}
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
	var pos uint64
	for i := 0; i < steps; i++ {
		p, n, err := r.Step(ctx, "tier_quality")
		if err != nil {
			t.Fatal(err)
		}
		if n != 0 || p <= pos {
			t.Fatalf("step %d over unhandled events: %d applied, at %d after %d; want 0 applied and progress", i, n, p, pos)
		}
		pos = p
	}
	if pos != last {
		t.Fatalf("%d steps over 150 unhandled events reached %d, want %d", steps, pos, last)
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

	// A rebuild reads the same way (more events first, so the reads
	// cover batches of other types on both sides of the rating) and
	// ends at the same read model and past every event.
	appendN(t, st, "tick-2", 150)
	if err := r.Replay(ctx, "tier_quality", 0, nil); err != nil {
		t.Fatal(err)
	}
	if n := ratings(); n != 1 {
		t.Fatalf("after a rebuild: %d ratings, want 1", n)
	}
	if got, head := checkpoint("tier_quality"), res.LastPosition+150; got != head {
		t.Fatalf("after a rebuild tier_quality is at %d, want the head %d", got, head)
	}
}
