package sqlproj_test

import (
	"context"
	"testing"
	"time"

	"github.com/arr-dev/arr/projections"
	"github.com/arr-dev/arr/projections/sqlproj"
)

// TestAttackDropGoesOnAfterLosingTheCheckpoint: the drop's transaction
// (which holds the checkpoint) is ended while the role's session waits to
// drop the schemas, as the server ends it when the process froze for
// BatchIdle. The checkpoint is free from then on (a live runner may take
// it, a redefinition may set the name up again), yet the role's session
// still drops the schemas once it gets its lock: destructive work done
// without the checkpoint, leaving the checkpoint row and role behind.
func TestAttackDropGoesOnAfterLosingTheCheckpoint(t *testing.T) {
	h := newHarness(t, sqlproj.Config{})
	ctx := context.Background()
	p, reader := h.droppedAndRead(t)
	done := make(chan error, 1)
	go func() {
		_, err := h.engine.Drop(ctx, p.Name)
		done <- err
	}()
	// The drop's transaction: it deleted the projection's fault row.
	var pid int
	deadline := time.Now().Add(10 * time.Second)
	for pid == 0 && time.Now().Before(deadline) {
		_ = h.pool.QueryRow(ctx, `SELECT coalesce(max(pid), 0) FROM pg_locks WHERE relation = 'public.projection_faults'::regclass
			AND mode = 'RowExclusiveLock' AND granted AND pid <> pg_backend_pid()`).Scan(&pid)
		time.Sleep(100 * time.Millisecond)
	}
	if pid == 0 {
		t.Fatal("no drop transaction found")
	}
	time.Sleep(time.Second) // the role's session is waiting on the reader's lock
	if _, err := h.pool.Exec(ctx, `SELECT pg_terminate_backend($1, 5000)`, pid); err != nil {
		t.Fatal(err)
	}
	var free bool
	if err := h.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM projection_checkpoints WHERE name = $1 FOR UPDATE SKIP LOCKED)`, p.Name).Scan(&free); err != nil {
		t.Fatal(err)
	}
	if !free {
		t.Fatal("the checkpoint is still held")
	}
	if err := reader.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		t.Logf("drop: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the drop did not end")
	}
	var schemaLeft bool
	if err := h.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)`, projections.Schema(p.Name)).Scan(&schemaLeft); err != nil {
		t.Fatal(err)
	}
	if !schemaLeft {
		t.Fatal("the schemas were dropped after the drop had lost the checkpoint (its transaction ended): the checkpoint row and role remain, the read model is gone")
	}
}
