package httpx

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestBodyGateChargesWhatArrivesPerAccount: the gate charges bytes, not
// requests; an account's keys share its cap; a chunk that does not fit
// waits, and when the wait runs out the youngest waiter of the full bound
// is refused and gives its bytes back, so the oldest goes on.
func TestBodyGateChargesWhatArrivesPerAccount(t *testing.T) {
	ctx := context.Background()
	g := NewBodyGate(8<<20, 4<<20, 50*time.Millisecond)
	// Idle requests (opened, nothing arrived) hold nothing.
	for range 100 {
		_ = g.charge("idle")
	}
	if g.Held() != 0 {
		t.Fatalf("idle requests hold %d bytes", g.Held())
	}
	// Two requests of one account fill its 4 MiB; a third waits and is
	// refused for the account, holding nothing after.
	a, b, c := g.charge("acc"), g.charge("acc"), g.charge("acc")
	if err := a.take(ctx, 2<<20); err != nil {
		t.Fatal(err)
	}
	if err := b.take(ctx, 2<<20); err != nil {
		t.Fatal(err)
	}
	var full *BodiesFull
	if err := c.take(ctx, 1); !errors.As(err, &full) || !full.Account {
		t.Fatalf("a third body of a full account: %v; want the account's refusal", err)
	}
	// Another account still fits in the process.
	o := g.charge("other")
	if err := o.take(ctx, 4<<20); err != nil {
		t.Fatalf("another account: %v", err)
	}
	// Two requests hold part of their bodies and both wait for more room
	// in a full process: the younger is refused and gives its bytes back,
	// the older goes on.
	g = NewBodyGate(8<<20, 8<<20, 50*time.Millisecond)
	old, young := g.charge("x"), g.charge("y")
	_ = old.take(ctx, 3<<20)
	_ = young.take(ctx, 3<<20)
	done := make(chan error, 2)
	go func() { done <- young.take(ctx, 3<<20) }()
	time.Sleep(10 * time.Millisecond)
	go func() {
		err := old.take(ctx, 3<<20)
		if err == nil {
			old.release()
		}
		done <- err
	}()
	var refused, went int
	for range 2 {
		if err := <-done; err == nil {
			went++
		} else if errors.As(err, &full) && !full.Account {
			refused++
			young.release()
		}
	}
	if went != 1 || refused != 1 {
		t.Fatalf("%d went on, %d refused; want the older on and the younger refused", went, refused)
	}
}
