package lifecycle_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/arr-dev/arr/cmd/arr/internal/lifecycle"
)

// events records what happened, in order.
type events struct {
	mu  sync.Mutex
	got []string
}

func (e *events) add(s string) { e.mu.Lock(); e.got = append(e.got, s); e.mu.Unlock() }
func (e *events) list() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.got)
}

// waiter runs until its context ends, then records its end.
func waiter(name string, ev *events, linger time.Duration) lifecycle.Component {
	return lifecycle.Component{Name: name, Run: func(ctx context.Context) error {
		<-ctx.Done()
		time.Sleep(linger)
		ev.add(name + " ended")
		return ctx.Err()
	}}
}

func TestStagesStopInOrder(t *testing.T) {
	ev := &events{}
	g := lifecycle.New(5*time.Second, nil)
	// The recorder must still run while the intake's Stop (a drain) runs.
	g.Add(lifecycle.Recorders, waiter("meter", ev, 0))
	g.Add(lifecycle.Intake, lifecycle.Component{Name: "server",
		Run: func(ctx context.Context) error { <-ctx.Done(); return nil },
		Stop: func(context.Context) error {
			time.Sleep(50 * time.Millisecond)
			ev.add("server drained")
			return nil
		}})
	g.Add(lifecycle.Intake, waiter("projections", ev, 0))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Run(ctx) }()
	time.Sleep(20 * time.Millisecond)
	cancel()
	if err := <-done; err != nil || g.Expired() {
		t.Fatalf("Run: %v (grace period expired: %v)", err, g.Expired())
	}
	got := ev.list()
	drained, meter := slices.Index(got, "server drained"), slices.Index(got, "meter ended")
	if drained < 0 || meter < 0 || meter < drained {
		t.Fatalf("the meter must end after the server drained: %v", got)
	}
	if !slices.Contains(got, "projections ended") {
		t.Fatalf("projections did not end: %v", got)
	}
}

func TestAFailureStopsEveryComponent(t *testing.T) {
	ev := &events{}
	g := lifecycle.New(5*time.Second, nil)
	boom := errors.New("boom")
	g.Add(lifecycle.Intake, lifecycle.Component{Name: "runner", Run: func(context.Context) error { return boom }})
	g.Add(lifecycle.Intake, waiter("server", ev, 0))
	g.Add(lifecycle.Recorders, waiter("chain", ev, 0))
	err := g.Run(context.Background())
	if !errors.Is(err, boom) {
		t.Fatalf("Run = %v, want the runner's failure", err)
	}
	if got := ev.list(); len(got) != 2 {
		t.Fatalf("every other component must have ended: %v", got)
	}
}

func TestAComponentThatFinishesDoesNotStopTheProcess(t *testing.T) {
	ev := &events{}
	g := lifecycle.New(5*time.Second, nil)
	g.Add(lifecycle.Intake, lifecycle.Func("seed", func(context.Context) { ev.add("seeded") }))
	g.Add(lifecycle.Intake, waiter("server", ev, 0))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := g.Run(ctx); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if el := time.Since(start); el < 100*time.Millisecond {
		t.Fatalf("Run returned after %v, before its context ended", el)
	}
	if got := ev.list(); !slices.Equal(got, []string{"seeded", "server ended"}) {
		t.Fatalf("events %v", got)
	}
}

func TestTheGracePeriodBoundsTheShutdown(t *testing.T) {
	ev := &events{}
	g := lifecycle.New(100*time.Millisecond, nil)
	stuck := make(chan struct{})
	defer close(stuck)
	g.Add(lifecycle.Intake, lifecycle.Component{Name: "stuck", Run: func(context.Context) error { <-stuck; return nil }})
	g.Add(lifecycle.Recorders, waiter("meter", ev, 0))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	if err := g.Run(ctx); err != nil || !g.Expired() {
		t.Fatalf("Run = %v, Expired %v; want nil and the grace period expired", err, g.Expired())
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("the shutdown took %v with a grace of 100ms", el)
	}
	if got := ev.list(); !slices.Equal(got, []string{"meter ended"}) {
		t.Fatalf("the meter must have stopped regardless: %v", got)
	}
}

func TestServerDrainsItsRequests(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	inFlight := make(chan struct{})
	srv := &http.Server{ReadHeaderTimeout: time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		close(inFlight)
		<-release
		_, _ = w.Write([]byte("done"))
	})}
	g := lifecycle.New(5*time.Second, nil)
	g.Add(lifecycle.Intake, lifecycle.Server("api", srv, ln))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Run(ctx) }()
	reply := make(chan int, 1)
	go func() {
		resp, err := http.Get("http://" + ln.Addr().String() + "/")
		if err != nil {
			reply <- 0
			return
		}
		_ = resp.Body.Close()
		reply <- resp.StatusCode
	}()
	<-inFlight
	cancel()
	select {
	case err := <-done:
		t.Fatalf("Run returned (%v) with a request in flight", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	if code := <-reply; code != http.StatusOK {
		t.Fatalf("the request in flight got %d, want 200", code)
	}
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
}

// TestTelemetryStopsLast: the telemetry stage's Stop (the tracer
// provider's flush) runs after the intake's drain and the recorders'
// Stops.
func TestTelemetryStopsLast(t *testing.T) {
	ev := &events{}
	g := lifecycle.New(5*time.Second, nil)
	stopper := func(name string, d time.Duration) lifecycle.Component {
		return lifecycle.Component{Name: name,
			Run: func(ctx context.Context) error { <-ctx.Done(); return nil },
			Stop: func(context.Context) error {
				time.Sleep(d)
				ev.add(name + " stopped")
				return nil
			}}
	}
	g.Add(lifecycle.Telemetry, stopper("traces", 0))
	g.Add(lifecycle.Recorders, stopper("chain", 30*time.Millisecond))
	g.Add(lifecycle.Intake, stopper("server", 30*time.Millisecond))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Run(ctx) }()
	time.Sleep(20 * time.Millisecond)
	cancel()
	if err := <-done; err != nil || g.Expired() {
		t.Fatalf("Run: %v (grace period expired: %v)", err, g.Expired())
	}
	if got, want := ev.list(), []string{"server stopped", "chain stopped", "traces stopped"}; !slices.Equal(got, want) {
		t.Fatalf("stopped in the order %v, want %v", got, want)
	}
	if lifecycle.Telemetry.String() != "telemetry" {
		t.Errorf("Telemetry is %q", lifecycle.Telemetry)
	}
}
