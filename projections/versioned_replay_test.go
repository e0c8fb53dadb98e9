package projections_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain/audit"
	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/projections/auditentries"
)

// TestReplayDecodesEverySchemaVersion: a log holding a version 1
// CompletionRecorded (no link field: link algorithm 1, the hash over the
// whole payload) and a version 2 one (link 2, the hash over the payload's
// digest) is replayed into the audit read model, live and by a rebuild;
// the runner decodes each through the registry (v1 upcast to v2 with link
// algorithm 1, see domain/catalog's TestUpcastOldVersions), so both
// verify and carry their own link algorithm.
func TestReplayDecodesEverySchemaVersion(t *testing.T) {
	pool, st, r := setup(t, auditentries.Projection{})
	ctx := context.Background()
	completion := func(i int) []byte {
		c := audit.Completion{AccountID: uuid.New(), KeyID: uuid.New(), Tier: "small", Model: "m", StartedAt: time.Date(2026, 11, 24, 10, i, 0, 0, time.UTC)}
		b, err := audit.Canonical(c)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	// Entry 0, as a version 1 event: no "link" field, hashed by HashV1.
	p0 := completion(0)
	h0, err := audit.HashV1(audit.Genesis, p0)
	if err != nil {
		t.Fatal(err)
	}
	v1, _ := json.Marshal(map[string]any{"seq": 0, "prev_hash": audit.Genesis, "hash": h0, "payload": json.RawMessage(p0)})
	// Entry 1, as a version 2 event.
	e1, err := audit.Link(1, h0, completion(1))
	if err != nil {
		t.Fatal(err)
	}
	v2, _ := json.Marshal(e1)
	for _, ev := range []eventstore.NewEvent{
		{ID: uuid.New(), Type: "CompletionRecorded", SchemaVersion: 1, Data: v1},
		{ID: uuid.New(), Type: "CompletionRecorded", SchemaVersion: 2, Data: v2},
	} {
		if _, err := st.Append(ctx, audit.StreamID, eventstore.Any(), ev); err != nil {
			t.Fatal(err)
		}
	}
	check := func(when string) {
		t.Helper()
		rows, err := pool.Query(ctx, `SELECT seq, link, verified, coalesce(problem, '') FROM rm_audit.entries ORDER BY seq`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		n := 0
		for rows.Next() {
			var seq, link int
			var ok bool
			var problem string
			if err := rows.Scan(&seq, &link, &ok, &problem); err != nil {
				t.Fatal(err)
			}
			if link != seq+1 || !ok || problem != "" {
				t.Errorf("%s: entry %d: link %d verified %v %q; want link %d, verified", when, seq, link, ok, problem, seq+1)
			}
			n++
		}
		if n != 2 {
			t.Fatalf("%s: %d entries", when, n)
		}
	}
	if _, _, err := r.Step(ctx, "audit"); err != nil {
		t.Fatal(err)
	}
	check("live")
	if err := r.Rebuild(ctx, "audit", nil); err != nil {
		t.Fatal(err)
	}
	check("rebuilt")
}
