package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
)

// Stage orders the shutdown: stages stop in increasing order.
type Stage int

const (
	// Intake is what takes in work: the HTTP servers (which drain their
	// in-flight requests) and the workers that follow the log
	// (projections, signer, fan-out, caches, index refresh).
	Intake Stage = iota
	// Recorders are what the drained requests still feed (the usage
	// meter, the served-answers recorder, the audit chain): they stop
	// after Intake, so work served during the drain is recorded.
	Recorders
	// Telemetry is what reports on the others (the tracer provider): it
	// stops last, once the servers have drained, so the spans of the
	// drained requests are exported.
	Telemetry
	stages
)

func (s Stage) String() string {
	switch s {
	case Intake:
		return "intake"
	case Recorders:
		return "recorders"
	case Telemetry:
		return "telemetry"
	}
	return fmt.Sprintf("stage %d", int(s))
}

// Component is one long-running part of the process.
type Component struct {
	// Name is how the log names it.
	Name string
	// Run runs until ctx ends and then returns nil (or ctx's error). An
	// error before the shutdown began stops the process; a nil return
	// before then is a component that finished its work (a one-off seed).
	Run func(ctx context.Context) error
	// Stop, if set, asks the component to finish within ctx (the grace
	// period) and returns once it has; an HTTP server's Shutdown. Run's
	// context is cancelled just before Stop is called either way.
	Stop func(ctx context.Context) error
}

// Group runs components and stops them in stage order.
type Group struct {
	grace   time.Duration
	log     *slog.Logger
	stages  [stages][]Component
	expired bool
}

// New returns a group whose shutdown is bounded by grace; log may be nil.
func New(grace time.Duration, log *slog.Logger) *Group {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Group{grace: grace, log: log}
}

// Add puts components in stage s.
func (g *Group) Add(s Stage, cs ...Component) {
	if s < 0 || s >= stages {
		panic(fmt.Sprintf("lifecycle: no %v", s))
	}
	g.stages[s] = append(g.stages[s], cs...)
}

// Len is the number of components.
func (g *Group) Len() int {
	n := 0
	for _, cs := range g.stages {
		n += len(cs)
	}
	return n
}

// running is a started component.
type running struct {
	Component
	cancel context.CancelFunc
}

// Run starts every component and returns after the shutdown: once ctx
// ends or a component fails, the stages stop in order and Run waits for
// every component, bounded by the grace period. It returns the failure
// that began the shutdown, or nil; Expired then says whether the grace
// period ran out with components still running.
func (g *Group) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	failed := make(chan error, g.Len())
	var started [stages][]running
	for s, cs := range g.stages {
		for _, c := range cs {
			// A component's context ends only when its stage stops: the
			// process's context ending begins the shutdown, not the
			// component's end.
			cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
			started[s] = append(started[s], running{Component: c, cancel: cancel})
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := c.Run(cctx); err != nil && cctx.Err() == nil {
					failed <- fmt.Errorf("%s: %w", c.Name, err)
				}
			}()
		}
	}
	var cause error
	select {
	case <-ctx.Done():
		g.log.Info("shutting down: draining in-flight requests and finishing the current batch")
	case cause = <-failed:
		g.log.Error("a component failed; shutting down", "err", cause)
	}
	grace, cancel := context.WithTimeout(context.Background(), g.grace)
	defer cancel()
	for s := range started {
		stopStage(grace, started[s], g.log)
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return cause
	case <-grace.Done():
		g.expired = true
		return cause
	}
}

// Expired reports whether Run returned because the grace period was over
// while components were still running.
func (g *Group) Expired() bool { return g.expired }

// stopStage cancels the stage's components and calls their Stops at
// once, returning when every Stop has.
func stopStage(grace context.Context, rs []running, log *slog.Logger) {
	var wg sync.WaitGroup
	for _, r := range rs {
		r.cancel()
		if r.Stop == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := r.Stop(grace); err != nil {
				log.Warn("stopping "+r.Name, "err", err)
			}
		}()
	}
	wg.Wait()
}

// Server is an HTTP server serving ln as a component: Stop is Shutdown,
// which stops accepting and waits for the requests in flight.
func Server(name string, srv *http.Server, ln net.Listener) Component {
	return Component{
		Name: name,
		Run: func(context.Context) error {
			if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		},
		Stop: srv.Shutdown,
	}
}

// Func makes fn, which returns nothing or an error that is only logged,
// a component (a loop that retries on its own).
func Func(name string, fn func(ctx context.Context)) Component {
	return Component{Name: name, Run: func(ctx context.Context) error { fn(ctx); return nil }}
}
