package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/eventstore"
)

// floodLinks is a SQL projection every SignInRequested event fails in: the
// CHECK refuses every address the test's events carry, until the test
// drops it.
const floodLinks = `-- arr:projection flood_links
CREATE TABLE links (link_id text PRIMARY KEY, email text CONSTRAINT only_allowed CHECK (email LIKE '%@allowed.example'));
-- arr:on SignInRequested
INSERT INTO links VALUES (:data->>'link_id', :data->>'email');
`

// parkedPage is `arr projections parked --json`.
type parkedPage struct {
	Total     int64        `json:"total"`
	NextAfter *int64       `json:"next_after"`
	Parked    []parkedJSON `json:"parked"`
}

// TestParkedCountsAreTotals: a projection that parks more than a thousand
// events (1,250 SignInRequested events its CHECK refuses) reports the true
// count everywhere — create, `arr projections parked` (a total, pages by
// position that together list every event once, "showing N of TOTAL"),
// /healthz and /metrics — and `arr projections retry` applies all of them,
// not the first thousand.
func TestParkedCountsAreTotals(t *testing.T) {
	const n = 1250
	e := newEnv(t)
	e.up()
	pool := testPool(t, e)
	t.Cleanup(func() { dropRoles(t, pool) })
	now := time.Now().UTC()
	evs := make([]eventstore.NewEvent, n)
	for i := range evs {
		data, _ := json.Marshal(map[string]any{"link_id": uuid.NewString(), "email": fmt.Sprintf("flood%d@example.com", i), "service": "records",
			"token_hash": strings.Repeat("ab", 32), "requested_at": now, "expires_at": now.Add(15 * time.Minute)})
		evs[i] = eventstore.NewEvent{ID: uuid.New(), Type: "SignInRequested", SchemaVersion: 1, Data: data, Metadata: eventstore.Metadata{Actor: "test"}}
	}
	appendBulk(t, pool, "test-flood", evs)

	file := filepath.Join(t.TempDir(), "flood.sql")
	if err := os.WriteFile(file, []byte(floodLinks), 0o644); err != nil {
		t.Fatal(err)
	}
	var created struct {
		Schema string `json:"schema"`
		Parked int64  `json:"parked"`
	}
	e.mustArr(&created, "projections", "create", file, "--by", "analyst", "--json")
	if created.Parked != n {
		t.Fatalf("create reports %d parked events, want %d", created.Parked, n)
	}

	// The first page: the default limit, the true total, a cursor.
	var first parkedPage
	e.mustArr(&first, "projections", "parked", "flood_links", "--json")
	if first.Total != n || len(first.Parked) != 100 || first.NextAfter == nil || *first.NextAfter != first.Parked[99].Position {
		t.Fatalf("parked --json: total %d, %d events, next_after %v; want total %d, 100 events and a cursor", first.Total, len(first.Parked), first.NextAfter, n)
	}
	// Paging by position lists every parked event once, in order.
	seen := map[int64]bool{}
	var last int64
	after := "0"
	for pages := 0; ; pages++ {
		if pages > 10 {
			t.Fatalf("more than 10 pages of 400 for %d events", n)
		}
		var p parkedPage
		e.mustArr(&p, "projections", "parked", "flood_links", "--json", "--limit", "400", "--after", after)
		if p.Total != n {
			t.Fatalf("page after %s: total %d, want %d", after, p.Total, n)
		}
		for _, pe := range p.Parked {
			if pe.Position <= last || seen[pe.Position] || pe.Projection != "flood_links" || !strings.Contains(pe.Error, "only_allowed") {
				t.Fatalf("page after %s: %+v (last position %d)", after, pe, last)
			}
			seen[pe.Position], last = true, pe.Position
		}
		if p.NextAfter == nil {
			break
		}
		after = fmt.Sprint(*p.NextAfter)
	}
	if len(seen) != n {
		t.Fatalf("the pages listed %d events, want %d", len(seen), n)
	}
	out, errs, code := e.arr("projections", "parked", "flood_links", "--limit", "5")
	if code != 0 || !strings.Contains(out, fmt.Sprintf("showing 5 of %d", n)) {
		t.Fatalf("parked (plain): exit %d %q %s", code, out, errs)
	}
	if _, errs, code := e.arr("projections", "parked", "--limit", "0"); code != 2 || !strings.Contains(errs, "--limit") {
		t.Fatalf("--limit 0: exit %d %s", code, errs)
	}

	// /healthz and /metrics count them all.
	eventually(t, 20*time.Second, "/healthz and /metrics count every parked event", func() bool {
		_, h := health(t, e.records)
		return h.Projections["flood_links"].Parked == n &&
			strings.Contains(metrics(t, e.records), fmt.Sprintf(`arr_projection_parked_events{projection="flood_links"} %d`, n))
	})

	// While the failure persists, a retry goes through all of them and
	// says so.
	var res struct {
		Applied     int64 `json:"applied"`
		StillParked int64 `json:"still_parked"`
	}
	out, errs, code = e.arr("projections", "retry", "flood_links", "--json")
	if err := json.Unmarshal([]byte(out), &res); code != 1 || err != nil || res.Applied != 0 || res.StillParked != n {
		t.Fatalf("retry with the failure on: exit %d %q %s", code, out, errs)
	}
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `ALTER TABLE `+created.Schema+`.links DROP CONSTRAINT only_allowed`); err != nil {
		t.Fatal(err)
	}
	e.mustArr(&res, "projections", "retry", "flood_links", "--json")
	if res.Applied != n || res.StillParked != 0 {
		t.Fatalf("retry: %+v, want %d applied and none still parked", res, n)
	}
	if got := count(t, pool, `SELECT count(*) FROM `+created.Schema+`.links`); got != n {
		t.Fatalf("the read model has %d rows after the retry, want %d", got, n)
	}
	var none parkedPage
	e.mustArr(&none, "projections", "parked", "flood_links", "--json")
	if none.Total != 0 || len(none.Parked) != 0 || none.NextAfter != nil {
		t.Fatalf("parked after the retry: %+v", none)
	}
	if _, h := health(t, e.records); h.Status != "ok" {
		t.Fatalf("/healthz after the retry: %+v", h)
	}
	if out, _, _ := e.arr("projections", "retry", "flood_links"); !strings.Contains(out, "0 parked event(s) applied, 0 still parked") {
		t.Fatalf("retry with nothing parked: %q", out)
	}
}
