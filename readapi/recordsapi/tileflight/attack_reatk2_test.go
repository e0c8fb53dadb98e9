package tileflight_test

import (
	"context"
	"runtime"
	"testing"
	"time"
)

// TestAttackWorkThatExitsIsNoValue: work that ends its goroutine without
// returning (runtime.Goexit, as t.FailNow or a log.Fatal-free helper
// calling it does) leaves val and err unset: run's recover sees no
// panic, and every waiter is handed the zero value with a nil error,
// an empty tile taken for a made one (and cached as such by the tiles
// route). Do should answer an error when the work did not return.
func TestAttackWorkThatExitsIsNoValue(t *testing.T) {
	g := group(t, 10*time.Second)
	v, err := g.Do(context.Background(), "k", func(context.Context) (int, error) {
		runtime.Goexit()
		return 7, nil
	})
	if err == nil {
		t.Errorf("Do = %d, nil after the work exited without returning; want an error", v)
	}
}
