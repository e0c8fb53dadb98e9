package gateway

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/arr-dev/arr/readapi/httpx"
	"github.com/arr-dev/arr/readapi/ratelimit"
)

// Request bodies in flight. A completion holds its body (and what is
// parsed from it) until it ends, a stream's for as long as it runs, so
// the memory of a gateway process grows with the bytes of the bodies of
// the requests in flight. The routes that take a body (completions,
// Responses, Messages, count_tokens, embeddings) reserve the body's bytes
// before it is read, in the process (Options.BodyBytes) and in the key
// (Options.KeyBodyBytes); a body of unknown length (chunked) reserves
// the largest body (4 MiB) and gives back what it did not use once read.
// A request that does not fit waits for room up to Options.BodyWait, then
// is refused, in the route's dialect, with
// Retry-After: 503 (Messages: 529 overloaded_error) when the process is
// full, 429 rate_limit_error when the key is (the refused body is read
// through a small buffer and dropped, so that the client reads the
// answer). The bytes are given back when the request ends.

// maxBody is the largest request body of the gateway.
const maxBody = 4 << 20

// bodyGate counts the bytes of request bodies in flight. Safe for
// concurrent use.
type bodyGate struct {
	max, perKey int64
	wait        time.Duration

	mu   sync.Mutex
	used int64
	keys map[uuid.UUID]int64
	// freed is closed (and replaced) whenever bytes are given back.
	freed chan struct{}
}

func newBodyGate(o Options) *bodyGate {
	g := &bodyGate{max: o.BodyBytes, perKey: o.KeyBodyBytes, wait: o.BodyWait, keys: map[uuid.UUID]int64{}, freed: make(chan struct{})}
	if g.max <= 0 {
		g.max = 64 << 20
	}
	if g.perKey <= 0 || g.perKey > g.max {
		g.perKey = min(16<<20, g.max)
	}
	if g.wait < 0 {
		g.wait = 0
	}
	return g
}

// bodiesFull is the refusal of a request whose body does not fit.
type bodiesFull struct {
	key   bool // the key's bytes, not the process's
	limit int64
	retry int
}

func (e *bodiesFull) Error() string {
	if e.key {
		return fmt.Sprintf("this API key has %d MiB of request bodies in flight, its limit (ARR_GATEWAY_KEY_BODIES_MB); retry once some of its requests have ended", e.limit>>20)
	}
	return fmt.Sprintf("the gateway has %d MiB of request bodies in flight, its limit (ARR_GATEWAY_BODIES_MB); retry shortly", e.limit>>20)
}

// acquire reserves n bytes for key, waiting up to the gate's bound.
func (g *bodyGate) acquire(ctx context.Context, key uuid.UUID, n int64) error {
	timer := time.NewTimer(g.wait)
	defer timer.Stop()
	for {
		g.mu.Lock()
		process, ofKey := g.used+n <= g.max, g.keys[key]+n <= g.perKey
		if process && ofKey {
			g.used += n
			g.keys[key] += n
			g.mu.Unlock()
			return nil
		}
		freed := g.freed
		g.mu.Unlock()
		select {
		case <-freed:
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C:
			if !ofKey {
				return &bodiesFull{key: true, limit: g.perKey, retry: 1}
			}
			return &bodiesFull{limit: g.max, retry: 1}
		}
	}
}

// release gives back n bytes of key.
func (g *bodyGate) release(key uuid.UUID, n int64) {
	if n <= 0 {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.used -= n
	if g.keys[key] -= n; g.keys[key] <= 0 {
		delete(g.keys, key)
	}
	close(g.freed)
	g.freed = make(chan struct{})
}

// middleware reserves the request body's bytes for the request's
// duration, or refuses it (fail) before the body is read.
func (g *bodyGate) middleware(c *gin.Context) {
	var key uuid.UUID
	if p, ok := httpx.PrincipalOf(c); ok {
		key = p.KeyID
	}
	n := c.Request.ContentLength
	if n < 0 || n > maxBody {
		n = maxBody // unknown (or refused as too large when read)
	}
	if err := g.acquire(c.Request.Context(), key, n); err != nil {
		// Read the refused body to its end through a small buffer (it
		// is at most 4 MiB, and must arrive within ARR_BODY_TIMEOUT), so
		// that the client reads the refusal: a connection closed on a
		// large unread body is reset, and the client would see a broken
		// pipe instead of the status and Retry-After. Nothing is kept.
		_, _ = io.Copy(io.Discard, c.Request.Body)
		fail(c, err)
		return
	}
	body := &countedBody{ReadCloser: c.Request.Body}
	c.Request.Body = body
	defer func() {
		g.release(key, n)
	}()
	if c.Request.ContentLength < 0 {
		// A chunked body: once read, keep only what it used.
		body.done = func(read int64) {
			if read < n {
				g.release(key, n-read)
				n = read
			}
		}
	}
	c.Next()
}

// countedBody counts what is read of a body and reports its length at
// its end.
type countedBody struct {
	io.ReadCloser
	read int64
	done func(read int64)
}

func (b *countedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.read += int64(n)
	if err == io.EOF && b.done != nil {
		b.done(b.read)
		b.done = nil
	}
	return n, err
}

// refuseBodies answers a bodiesFull in the dialect of the route.
func refuseBodies(c *gin.Context, e *bodiesFull) httpx.Problem {
	ratelimit.MarkNotServed(c) // nothing was read or sent upstream
	c.Header("Retry-After", strconv.Itoa(e.retry))
	if e.key {
		return httpx.Problem{Status: http.StatusTooManyRequests, Code: "key_bodies_in_flight", Message: e.Error()}
	}
	status := http.StatusServiceUnavailable
	if isMessagesRoute(c) {
		status = 529 // Anthropic's overloaded_error
	}
	return httpx.Problem{Status: status, Code: "bodies_in_flight", Message: e.Error()}
}

// readBody reads the request's body into one buffer of its declared
// length (io.ReadAll would grow it by doubling, holding up to twice the
// body while it reads); a body of unknown length is read as io.ReadAll
// does. The engine's MaxBytesReader bounds both.
func readBody(c *gin.Context) ([]byte, error) {
	n := c.Request.ContentLength
	if n < 0 || n > maxBody {
		return io.ReadAll(c.Request.Body)
	}
	buf := make([]byte, n, n+1) // +1: reading EOF needs no second buffer
	if _, err := io.ReadFull(c.Request.Body, buf); err != nil {
		if err == io.ErrUnexpectedEOF {
			return nil, fmt.Errorf("the request body ended before its Content-Length: %w", err)
		}
		return nil, err
	}
	// Anything past the declared length is the engine's to refuse.
	var one [1]byte
	if k, _ := c.Request.Body.Read(one[:]); k > 0 {
		return nil, fmt.Errorf("the request body is longer than its Content-Length")
	}
	return buf, nil
}
