package fanout_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/arr-dev/arr/eventstore/fanout"
)

// running is a Forwarder.Run in a goroutine.
type running struct {
	cancel context.CancelFunc
	done   chan struct{}
	err    error
}

// start runs f until stop, cancel or the end of the test; cancel must
// cancel ctx.
func start(t testing.TB, ctx context.Context, cancel context.CancelFunc, f *fanout.Forwarder) *running {
	t.Helper()
	r := &running{cancel: cancel, done: make(chan struct{})}
	go func() { r.err = f.Run(ctx); close(r.done) }()
	t.Cleanup(func() { _ = r.stop(t) })
	return r
}

// stop cancels Run and returns what it returned.
func (r *running) stop(t testing.TB) error {
	t.Helper()
	r.cancel()
	return r.wait(t)
}

// wait returns what Run returned, without cancelling it.
func (r *running) wait(t testing.TB) error {
	t.Helper()
	select {
	case <-r.done:
		return r.err
	case <-time.After(waitLimit):
		return errors.New("Run did not return after its context was cancelled")
	}
}

// fault says what a faultyPublisher does once `after` messages reached the
// broker: cancel the forwarder's context, and/or report the next `fail`
// publishes as failed although the broker has them (a lost ack).
type fault struct {
	after int
	stop  bool
	fail  int
}

// faultyPublisher wraps a real publisher to inject those faults.
type faultyPublisher struct {
	message.Publisher
	fault  fault
	cancel func()

	mu        sync.Mutex
	published int    // messages the broker accepted, re-publishes included
	last      uint64 // highest position the broker accepted
	failed    int
}

func (p *faultyPublisher) Publish(topic string, msgs ...*message.Message) error {
	if err := p.Publisher.Publish(topic, msgs...); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.published += len(msgs)
	for _, m := range msgs {
		if pos, _ := strconv.ParseUint(m.Metadata.Get(fanout.MetaPosition), 10, 64); pos > p.last {
			p.last = pos
		}
	}
	if p.published < p.fault.after {
		return nil
	}
	if p.fault.stop && p.cancel != nil {
		p.cancel()
	}
	if p.failed < p.fault.fail {
		p.failed++
		return errors.New("injected fault: broker ack lost")
	}
	return nil
}

func (p *faultyPublisher) lastPosition() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.last
}

// metricValue reads one counter or gauge from a registry.
func metricValue(t testing.TB, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("gathering metrics: %v", err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name || len(mf.GetMetric()) == 0 {
			continue
		}
		m := mf.GetMetric()[0]
		if c := m.GetCounter(); c != nil {
			return c.GetValue()
		}
		return m.GetGauge().GetValue()
	}
	t.Fatalf("metric %s not registered", name)
	return 0
}
