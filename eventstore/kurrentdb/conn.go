package kurrentdb

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/EventStore/EventStore-Client-Go/v4/esdb"
)

var errClosed = errors.New("kurrentdb event store closed")

// closeWait bounds how long Close waits for calls still inside the client.
const closeWait = 5 * time.Second

// conn guards the esdb client against three of its habits:
//
//   - It gives up rediscovering the server after MaxDiscoverAttempts and then
//     never works again; conn sets the attempts to unlimited, so the client
//     reconnects whenever the server is back.
//   - While it rediscovers, its calls block without looking at their
//     context; conn runs every call in a goroutine and returns when the
//     context ends, leaving the goroutine to finish once the client answers.
//   - Close panics calls still inside it (it closes a channel they send on);
//     conn counts calls in flight and closes the client only when none is.
//
// Safe for concurrent use.
type conn struct {
	log *slog.Logger

	mu       sync.Mutex
	client   *esdb.Client
	closed   bool
	inFlight sync.WaitGroup
}

func newConn(conf *esdb.Configuration, log *slog.Logger) (*conn, error) {
	conf.MaxDiscoverAttempts = math.MaxInt32
	c, err := esdb.NewClient(conf)
	if err != nil {
		return nil, fmt.Errorf("kurrentdb client: %w", err)
	}
	return &conn{log: log, client: c}, nil
}

// call runs fn with the client in its own goroutine and returns fn's
// result, or ctx's error when ctx ends first (fn then finishes on its own).
func call[T any](ctx context.Context, c *conn, fn func(*esdb.Client) (T, error)) (T, error) {
	var zero T
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return zero, errClosed
	}
	client := c.client
	c.inFlight.Add(1)
	c.mu.Unlock()
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		defer c.inFlight.Done()
		v, err := fn(client)
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		return zero, ctx.Err()
	}
}

// close refuses new calls, waits a while for those in flight, and closes the
// client if they all finished; otherwise it leaves the client to the garbage
// collector rather than panic them.
func (c *conn) close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.mu.Unlock()
	drained := make(chan struct{})
	go func() {
		c.inFlight.Wait()
		close(drained)
	}()
	select {
	case <-drained:
		return c.client.Close()
	case <-time.After(closeWait):
		c.log.Warn("kurrentdb: calls still blocked in the client after close; leaving it open")
		return nil
	}
}

// clientLogger routes the client's log lines to log at debug level: every
// failure it reports also comes back to the store as an error, which the
// store returns or logs itself.
func clientLogger(log *slog.Logger) esdb.LoggingFunc {
	return func(level esdb.LogLevel, format string, args ...interface{}) {
		if log.Enabled(context.Background(), slog.LevelDebug) {
			log.Debug("kurrentdb client: "+fmt.Sprintf(format, args...), "client_level", level)
		}
	}
}
