package sqlproj_test

import (
	"context"
	"strconv"
	"sync"
	"testing"

	"github.com/arr-dev/arr/projections"
	"github.com/arr-dev/arr/projections/sqlproj"
)

// TestSwapOutlastsBatchIdleWhileTheRoleApplies: a rebuild's swap of a SQL
// projection holds the checkpoint in a transaction of arr's, set to end
// when idle for BatchIdle (a frozen process), around the role's own,
// which applies what arrived since the shadow was loaded. A catch-up of
// the role's that takes longer than BatchIdle (here an event whose SQL
// sleeps past it) does not get the live process's swap ended: the swap
// commits, with the event applied.
func TestSwapOutlastsBatchIdleWhileTheRoleApplies(t *testing.T) {
	h := newHarness(t, sqlproj.Config{})
	p := h.define(t, head+"-- arr:on CompletionRecorded\nINSERT INTO t SELECT 'slept ' || (:data->'payload'->>'q') FROM pg_sleep((:data->'payload'->>'q')::float);")
	h.waitFor(t, p.Name, h.probe(t, "0"))
	slow := (projections.BatchIdle + projections.BatchIdle/3).Seconds()
	var once sync.Once
	err := h.runner.Rebuild(context.Background(), p.Name, func(done, total uint64) {
		if done >= total { // loaded: what arrives now the swap applies
			once.Do(func() { h.probe(t, formatSeconds(slow)) })
		}
	})
	if err != nil {
		t.Fatalf("rebuild whose swap applied an event taking %.1fs (BatchIdle %s): %v", slow, projections.BatchIdle, err)
	}
	res := h.query(t, p.Name, "SELECT count(*) FROM t")
	if len(res.Rows) != 1 || sqlproj.Text(res.Rows[0][0]) != "2" {
		t.Fatalf("rows after the rebuild: %v, want 2 (both probes)", res.Rows)
	}
}

func formatSeconds(s float64) string {
	return strconv.FormatFloat(s, 'f', 1, 64)
}

// TestRetryParkedInTheRolesSession: a retry of a SQL projection's parked
// events holds its checkpoint in a session of the role, set up as a
// swap's transaction is (timeouts; no batch lock, which is not the role's
// to take): an event that fails again stays parked, one fixed since
// (here: none) would apply.
func TestRetryParkedInTheRolesSession(t *testing.T) {
	h := newHarness(t, sqlproj.Config{})
	p := h.define(t, head+"-- arr:on CompletionRecorded\nINSERT INTO t SELECT ((:data->'payload'->>'q')::int)::text;")
	h.probe(t, "x")
	last := h.probe(t, "1")
	ctx := context.Background()
	for range 3 {
		if _, _, err := h.runner.Step(ctx, p.Name); err == nil {
			break
		}
	}
	h.waitFor(t, p.Name, last)
	res, err := h.runner.RetryParked(ctx, p.Name, nil)
	if err != nil || res.Applied != 0 || res.StillParked != 1 {
		t.Fatalf("retry: %+v, %v; want the event tried again and still parked", res, err)
	}
}
