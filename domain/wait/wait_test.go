package wait_test

import (
	"context"
	"testing"
	"time"

	"github.com/arr-dev/arr/domain/wait"
)

func TestSleep(t *testing.T) {
	if !wait.Sleep(context.Background(), time.Millisecond) {
		t.Fatal("a sleep that ran its course reports it was cut short")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	if wait.Sleep(ctx, time.Hour) || time.Since(start) > time.Second {
		t.Fatal("a sleep on an ended context did not return at once, false")
	}
	if wait.Sleep(ctx, 0) || !wait.Sleep(context.Background(), -time.Second) {
		t.Fatal("a zero sleep: false on an ended context, true otherwise")
	}
}
