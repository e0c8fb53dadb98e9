package complete_test

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/commands/complete"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/eventstore/postgres"
)

// holdCommits makes the harness's PostgreSQL store slow: every append
// waits just before COMMIT (inside its transaction, the log's head row
// locked) until release is called. reached signals each append held.
func holdCommits(t *testing.T) (cfg postgres.Config, reached <-chan struct{}, release func()) {
	t.Helper()
	open := make(chan struct{})
	r := make(chan struct{}, 64)
	released := false
	release = func() {
		if !released {
			released = true
			close(open)
		}
	}
	t.Cleanup(release)
	return postgres.Config{BeforeCommit: func(ctx context.Context, _ int) error {
		select {
		case r <- struct{}{}:
		default:
		}
		select {
		case <-open:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}}, r, release
}

type handled struct {
	res complete.Result
	err error
}

// TestHandleAnswersOnlyWhatIsRecorded: with a slow store, a completion
// whose audit entry was sent before its wait (RecordTimeout) ended gets
// its reply with the hash the chain holds; one whose entry was still
// queued fails, reply or stream, and is never in the chain.
func TestHandleAnswersOnlyWhatIsRecorded(t *testing.T) {
	store, reached, release := holdCommits(t)
	hs := newHarness(t, options{store: store, startChain: true, complete: func(c *complete.Config) { c.RecordTimeout = 300 * time.Millisecond }})

	a := make(chan handled, 1)
	go func() {
		res, err := hs.complete(t, request(t, "First", nil), complete.CacheAuto)
		a <- handled{res, err}
	}()
	<-reached // a's entry is in the store, held before COMMIT

	// b and c's entries queue behind a's until their wait ends.
	if _, err := hs.complete(t, request(t, "Second", nil), complete.CacheAuto); err == nil || !errors.Is(err, domain.ErrUnavailable) || errors.Is(err, commands.ErrOutcomeUnknown) {
		t.Fatalf("b, not recorded in time: %v, want a 'not recorded' error", err)
	}
	res, err := hs.complete(t, request(t, "Third", map[string]any{"stream": true}), complete.CacheAuto)
	if err != nil {
		t.Fatal(err)
	}
	chunks, err := drain(t, res.Stream)
	if err == nil || errors.Is(err, io.EOF) || !errors.Is(err, domain.ErrUnavailable) || len(chunks) == 0 {
		t.Fatalf("c, a stream not recorded in time: %d chunks, then %v; want a 'not recorded' error", len(chunks), err)
	}

	select {
	case r := <-a:
		t.Fatalf("a returned while its sent entry was held: %v", r.err)
	case <-time.After(200 * time.Millisecond):
	}
	release()
	var ra handled
	select {
	case ra = <-a:
	case <-time.After(30 * time.Second):
		t.Fatal("a: no reply after the store went on")
	}
	if ra.err != nil {
		t.Fatalf("a: %v", ra.err)
	}
	if _, err := hs.complete(t, request(t, "Fourth", nil), complete.CacheAuto); err != nil {
		t.Fatal(err)
	}
	es := hs.entries(t)
	if len(es) != 2 || es[0].Hash != ra.res.Reply.Routing.AuditHash || es[1].Completion.RequestHash != hs.key.Sum(request(t, "Fourth", nil).Body) {
		t.Fatalf("%d audit entries; want a (with the hash its reply has) and the fourth, never b or c", len(es))
	}
}
