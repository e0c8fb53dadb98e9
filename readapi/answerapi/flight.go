package answerapi

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/arr-dev/arr/projections/answercache"
)

// researchBound bounds one synthesis, whoever waits for it.
const researchBound = 3 * time.Minute

// errStopSynthesis is the cause a research job's context is canceled
// with: the synthesis it waits for stops, as a client's hang-up before
// any text would stop it.
var errStopSynthesis = errors.New("the research job was stopped")

// tailBound is how long a synthesis whose text began streaming goes on
// once every asker has gone: the model may finish its answer, then it is
// cut where it is (research.Progress.Cut) and the text relayed is
// recorded. A client that took the text then hung up has an answer that
// is recorded and cached, not one paid for and lost.
const tailBound = 8 * time.Second

// flight runs one synthesis per cache key at a time: concurrent askers of
// the same question share it (as singleflight would), and see the
// progress it made so far and as it comes (a streamed answer's sources and
// deltas). A synthesis is cancelled when every asker that shares it has
// gone: only a streaming asker leaves early (its client hung up); a plain
// asker waits for the result, which is cached for the next one. Safe for
// concurrent use.
type flight struct {
	mu    sync.Mutex
	calls map[string]*call
}

func newFlight() *flight { return &flight{calls: map[string]*call{}} }

// progress is one event of a synthesis as it goes: its name and its data
// (JSON).
type progress struct {
	name string
	data []byte
}

// call is one synthesis in flight.
type call struct {
	done   chan struct{} // closed when res and err are set
	res    answercache.CachedAnswer
	err    error
	cancel context.CancelFunc
	askers int         // guarded by flight.mu
	tail   *time.Timer // guarded by flight.mu: cuts a text nobody reads
	// cut is closed (cutOnce) to stop a model answer where it is.
	cut     chan struct{}
	cutOnce sync.Once

	mu      sync.Mutex
	events  []progress
	more    chan struct{} // closed (and replaced) when events grow
	writing bool          // a delta was published: the text is out
}

// cutText stops a streamed model answer where it is.
func (c *call) cutText() { c.cutOnce.Do(func() { close(c.cut) }) }

// textOut reports whether the answer's text began streaming.
func (c *call) textOut() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.writing
}

// publish adds an event and wakes the askers.
func (c *call) publish(p progress) {
	c.mu.Lock()
	c.writing = c.writing || p.name == eventDelta
	c.events = append(c.events, p)
	close(c.more)
	c.more = make(chan struct{})
	c.mu.Unlock()
}

// since is the events from i on and the channel closed at the next one.
func (c *call) since(i int) ([]progress, <-chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.events[i:], c.more
}

// join starts run for key unless a synthesis of key is in flight, and
// counts the caller as one of its askers. run's context keeps ctx's values
// (the first asker's trace and request metadata), not its cancellation.
func (f *flight) join(ctx context.Context, key string, run func(ctx context.Context, c *call) (answercache.CachedAnswer, error)) *call {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.calls[key]
	if !ok {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), researchBound)
		c = &call{done: make(chan struct{}), cancel: cancel, more: make(chan struct{}), cut: make(chan struct{})}
		f.calls[key] = c
		go func() {
			res, err := run(rctx, c)
			f.mu.Lock()
			if f.calls[key] == c {
				delete(f.calls, key)
			}
			f.mu.Unlock()
			c.res, c.err = res, err
			cancel()
			close(c.done)
		}()
	} else if c.tail != nil {
		c.tail.Stop() // read again: not cut
		c.tail = nil
	}
	c.askers++
	return c
}

// leave takes an asker off c. The last one cancels the synthesis (and a
// later asker of its key starts a new one) while no text was streamed;
// once the text is out the synthesis goes on for tailBound, is cut
// there, and records its answer (a later asker joins it meanwhile).
// With stop (the asker's context ended with errStopSynthesis: a research
// job canceled, not a client that hung up) the last asker cancels the
// synthesis even when its text is out.
func (f *flight) leave(key string, c *call, stop bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c.askers--
	if c.askers > 0 {
		return
	}
	select {
	case <-c.done:
		return
	default:
	}
	if c.textOut() && !stop {
		c.tail = time.AfterFunc(tailBound, c.cutText)
		return
	}
	if f.calls[key] == c {
		delete(f.calls, key)
	}
	c.cancel()
}

// wait waits for c's result. With a nil see it ignores ctx (the synthesis
// outlives a plain asker that hangs up); else it passes every event to
// see, in order, from the first, and gives up when ctx ends, leaving c.
func (f *flight) wait(ctx context.Context, key string, c *call, see func(progress)) (answercache.CachedAnswer, error) {
	if see == nil {
		<-c.done
		f.leave(key, c, false)
		return c.res, c.err
	}
	seen := 0
	for {
		evs, more := c.since(seen)
		for _, e := range evs {
			see(e)
		}
		seen += len(evs)
		select {
		case <-c.done:
			evs, _ := c.since(seen)
			for _, e := range evs {
				see(e)
			}
			f.leave(key, c, false)
			return c.res, c.err
		case <-ctx.Done():
			f.leave(key, c, errors.Is(context.Cause(ctx), errStopSynthesis))
			return answercache.CachedAnswer{}, context.Cause(ctx)
		case <-more:
		}
	}
}
