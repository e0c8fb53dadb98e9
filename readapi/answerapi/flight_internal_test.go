package answerapi

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/projections/answercache"
)

// started runs a synthesis that publishes one event, then reports its
// context's end (cancelled) or finishes when finish is closed.
func started(t *testing.T, f *flight, ctx context.Context, key string) (c *call, running chan struct{}, cancelled chan error, finish chan struct{}) {
	t.Helper()
	running, cancelled, finish = make(chan struct{}), make(chan error, 1), make(chan struct{})
	c = f.join(ctx, key, func(rctx context.Context, c *call) (answercache.CachedAnswer, error) {
		c.publish(progress{name: eventSources, data: []byte(`[]`)})
		close(running)
		select {
		case <-rctx.Done():
			cancelled <- rctx.Err()
			return answercache.CachedAnswer{}, rctx.Err()
		case <-finish:
			return answercache.CachedAnswer{CacheKey: key, Answer: "done"}, nil
		case <-time.After(10 * time.Second):
			return answercache.CachedAnswer{}, errors.New("the test never finished the synthesis")
		}
	})
	<-running
	return c, running, cancelled, finish
}

// TestFlightSharing: askers of one key share one synthesis; a late
// asker sees the events sent before it joined; the synthesis is cancelled
// only when every streaming asker has gone, and never while a plain asker
// waits.
func TestFlightSharing(t *testing.T) {
	never := func(context.Context, *call) (answercache.CachedAnswer, error) {
		t.Error("a second synthesis of a key in flight started")
		return answercache.CachedAnswer{}, nil
	}
	t.Run("the last streaming asker to leave cancels", func(t *testing.T) {
		f := newFlight()
		c, _, cancelled, _ := started(t, f, context.Background(), "k")
		if f.join(context.Background(), "k", never) != c {
			t.Fatal("a second asker did not join the call in flight")
		}
		a, stopA := context.WithCancel(context.Background())
		b, stopB := context.WithCancel(context.Background())
		var seen []string
		errA, errB := make(chan error, 1), make(chan error, 1)
		go func() { _, err := f.wait(a, "k", c, func(p progress) { seen = append(seen, p.name) }); errA <- err }()
		go func() { _, err := f.wait(b, "k", c, func(progress) {}); errB <- err }()
		stopA()
		if err := <-errA; !errors.Is(err, context.Canceled) {
			t.Fatalf("A: %v", err)
		}
		if len(seen) != 1 || seen[0] != eventSources {
			t.Fatalf("A saw %v, want the event sent before it waited", seen)
		}
		select {
		case err := <-cancelled:
			t.Fatalf("cancelled (%v) while B shares it", err)
		case <-time.After(200 * time.Millisecond):
		}
		stopB()
		<-errB
		select {
		case err := <-cancelled:
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("ended with %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("not cancelled when every asker had gone")
		}
		// The next asker of the key starts anew.
		c2, _, _, finish := started(t, f, context.Background(), "k")
		if c2 == c {
			t.Fatal("joined a cancelled call")
		}
		close(finish)
		if a, err := f.wait(context.Background(), "k", c2, nil); err != nil || a.Answer != "done" {
			t.Fatalf("%+v %v", a, err)
		}
	})
	t.Run("a plain asker keeps it", func(t *testing.T) {
		f := newFlight()
		c, _, cancelled, finish := started(t, f, context.Background(), "k")
		f.join(context.Background(), "k", never)
		s, stop := context.WithCancel(context.Background())
		plainCtx, hangUp := context.WithCancel(context.Background())
		hangUp() // a plain asker whose client hung up still waits
		plain := make(chan answercache.CachedAnswer, 1)
		go func() { a, _ := f.wait(plainCtx, "k", c, nil); plain <- a }()
		stop()
		if _, err := f.wait(s, "k", c, func(progress) {}); !errors.Is(err, context.Canceled) {
			t.Fatalf("streaming asker: %v", err)
		}
		select {
		case err := <-cancelled:
			t.Fatalf("cancelled (%v) while a plain asker waits", err)
		case <-time.After(200 * time.Millisecond):
		}
		close(finish)
		if a := <-plain; a.Answer != "done" {
			t.Fatalf("plain asker got %+v", a)
		}
	})
}

// TestStreamErrorEvent: the error event of a stream that fails after it
// began carries the body the plain request's error has, byte for byte.
func TestStreamErrorEvent(t *testing.T) {
	gin.SetMode(gin.TestMode)
	for _, err := range []error{
		&domain.Error{Kind: domain.ErrUnavailable, Code: "search_unavailable", Message: "web search is temporarily unavailable; retry in 30 seconds"},
		errors.New("boom <&>"),
		domain.Invalid("invalid_stream", "stream", "stream must be true or false"),
	} {
		plain := httptest.NewRecorder()
		pc, _ := gin.CreateTestContext(plain)
		pc.Request = httptest.NewRequest(http.MethodPost, "/api/v1/answer", nil)
		fail(pc, err)

		streamed := httptest.NewRecorder()
		sc, _ := gin.CreateTestContext(streamed)
		sc.Request = httptest.NewRequest(http.MethodPost, "/api/v1/answer", nil)
		s := &sse{c: sc}
		s.send(eventSources, []byte(`[]`))
		s.fail(err)
		want := "event: sources\ndata: []\n\nevent: error\ndata: " + strings.TrimSuffix(plain.Body.String(), "\n") + "\n\n"
		if streamed.Code != 200 || streamed.Header().Get("Content-Type") != "text/event-stream" || streamed.Body.String() != want {
			t.Fatalf("%v: got %d %q\n%s\nwant\n%s", err, streamed.Code, streamed.Header().Get("Content-Type"), streamed.Body.String(), want)
		}
	}
}
