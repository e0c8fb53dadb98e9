package answer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/arr-dev/arr/projections/answercache"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/commands/research"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/answer"
	"github.com/arr-dev/arr/readapi/app"
	"github.com/arr-dev/arr/readapi/httpx"
)

// Synthesizer is the command that researches and records an answer.
type Synthesizer interface {
	Handle(ctx context.Context, c commands.SynthesizeAnswer) (answer.AnswerSynthesized, uint64, error)
}

// Cache reads the answer cache read model.
type Cache interface {
	Lookup(ctx context.Context, key string, now time.Time) (answercache.CachedAnswer, error)
}

// searchRetryAfter is the Retry-After of a 503 when search is down.
const searchRetryAfter = 30 * time.Second

type handler struct {
	app    app.Application
	d      httpx.Deps
	flight *flight
	memo   *memo
}

// body is the POST body.
type body struct {
	Q    *string `json:"q"`
	Tier string  `json:"tier"`
	Mode string  `json:"mode"`
	// Stream asks for server-sent events (true or false).
	Stream json.RawMessage `json:"stream"`
}

func (h *handler) get(c *gin.Context) error {
	req, err := ParseQuery(c.Request.URL.Query())
	return h.answer(c, req, wantsStream(c, false), err)
}

func (h *handler) post(c *gin.Context) error {
	req, stream, err := parseBody(c.Request.Body)
	return h.answer(c, req, wantsStream(c, stream), err)
}

// ParseQuery reads the question of GET /api/v1/answer from its query
// parameters q, tier and mode.
func ParseQuery(v url.Values) (answer.Request, error) {
	q, ok := v["q"]
	first := ""
	if ok && len(q) > 0 {
		first = q[0]
	}
	return answer.ParseRequest(first, ok, v.Get("tier"), v.Get("mode"))
}

// ParseBody reads the question of POST /api/v1/answer from its JSON body
// (its stream field is checked, not returned).
func ParseBody(r io.Reader) (answer.Request, error) {
	req, _, err := parseBody(r)
	return req, err
}

// parseBody reads the question of POST /api/v1/answer and whether it asks
// for a stream.
func parseBody(r io.Reader) (answer.Request, bool, error) {
	var b body
	if err := json.NewDecoder(r).Decode(&b); err != nil {
		if httpx.IsBodyError(err) {
			return answer.Request{}, false, err
		}
		return answer.Request{}, false, domain.Invalid("invalid_json", "", "the body must be a JSON object like {\"q\":\"…\",\"tier\":\"free\",\"mode\":\"quick\",\"stream\":false}: %v", err)
	}
	q := ""
	if b.Q != nil {
		q = *b.Q
	}
	req, err := answer.ParseRequest(q, b.Q != nil, b.Tier, b.Mode)
	if err != nil {
		return req, false, err
	}
	stream, err := parseStream(b.Stream)
	return req, stream, err
}

// response is the answer body.
type response struct {
	Query         string          `json:"query"`
	Answer        string          `json:"answer"`
	Sources       []answer.Source `json:"sources"`
	Tier          answer.Tier     `json:"tier"`
	Mode          answer.Mode     `json:"mode"`
	Cached        bool            `json:"cached"`
	Synthesis     string          `json:"synthesis"`
	SubQuestions  []string        `json:"sub_questions,omitempty"`
	AnswerID      string          `json:"answer_id"`
	SynthesizedAt time.Time       `json:"synthesized_at"`
	ExpiresAt     time.Time       `json:"expires_at"`
}

func (h *handler) answer(c *gin.Context, req answer.Request, stream bool, err error) error {
	if err != nil {
		return err
	}
	p, _ := httpx.PrincipalOf(c)
	if err := req.Authorize(p.Plan); err != nil {
		return err
	}
	ctx := c.Request.Context()
	if gen := h.app.Answers.Generation; gen != nil {
		if req.Generation, err = gen(ctx); err != nil {
			return err
		}
	}
	var s *sse
	if stream {
		s = &sse{c: c}
	}
	key := req.CacheKey()
	cached := true
	a, err := h.lookup(ctx, key)
	if errors.Is(err, answercache.ErrNoCachedAnswer) {
		cached = false
		a, err = h.synthesize(ctx, req, httpx.CommandMetadata(c, "key:"+p.KeyID.String()), s)
	}
	if err != nil {
		if s != nil && ctx.Err() != nil {
			// The client hung up: nothing more is sent and no answer is
			// recorded as served; the call stays counted (quota and
			// meter), as a plain call whose client hangs up is.
			if !s.started {
				c.Abort()
			}
			return nil
		}
		if errors.Is(err, domain.ErrUnavailable) && !errors.Is(err, context.DeadlineExceeded) {
			secs := int(searchRetryAfter.Seconds())
			err = &domain.Error{Kind: domain.ErrUnavailable, Code: "search_unavailable",
				Message: fmt.Sprintf("web search is temporarily unavailable; retry in %d seconds", secs)}
			if s == nil || !s.started {
				c.Header("Retry-After", strconv.Itoa(secs))
			}
		}
		if s != nil && s.started {
			s.fail(err)
			return nil
		}
		return err
	}
	h.app.Answers.Served.Record(answer.AnswerServed{AccountID: p.AccountID, KeyID: p.KeyID, CacheKey: key, AnswerID: a.AnswerID,
		Tier: req.Tier, Mode: req.Mode, Cached: cached, ServedAt: h.app.Now().UTC()})
	resp := response{Query: req.Query, Answer: a.Answer, Sources: a.Sources, Tier: req.Tier, Mode: req.Mode,
		Cached: cached, Synthesis: string(a.Synthesis), SubQuestions: a.SubQuestions, AnswerID: a.AnswerID.String(),
		SynthesizedAt: a.SynthesizedAt, ExpiresAt: a.ExpiresAt}
	if s == nil {
		c.JSON(http.StatusOK, resp)
		return nil
	}
	s.whole(a.Sources, a.Answer)
	s.sendJSON(eventDone, resp)
	return nil
}

// lookup reads the cache: the in-process memo first, the read model next.
func (h *handler) lookup(ctx context.Context, key string) (answercache.CachedAnswer, error) {
	now := h.d.App.Now()
	if a, ok := h.memo.get(key, now); ok {
		return a, nil
	}
	a, err := h.app.Queries.AnswerCache.Lookup(ctx, key, now)
	if err == nil {
		h.memo.put(a)
	}
	return a, err
}

// synthesize runs the command once per cache key at a time (concurrent
// askers of the same question share it, flight), waits until the cache
// read model holds the result and answers from there. md is the first
// asker's: the event it appends carries that request's id. With s set the
// asker streams: it sends the synthesis's sources and deltas as they come
// (those before it joined first), and gives up when its client hangs up,
// which cancels the synthesis if no other asker shares it.
func (h *handler) synthesize(ctx context.Context, req answer.Request, md commands.Metadata, s *sse) (answercache.CachedAnswer, error) {
	key := req.CacheKey()
	call := h.flight.join(ctx, key, func(rctx context.Context, call *call) (answercache.CachedAnswer, error) {
		rctx = research.WithProgress(rctx, &research.Progress{
			Sources: func(src []answer.Source) {
				if src == nil {
					src = []answer.Source{}
				}
				if b, err := json.Marshal(src); err == nil {
					call.publish(progress{name: eventSources, data: b})
				}
			},
			Delta: func(text string) {
				if b, err := json.Marshal(delta{Text: text}); err == nil {
					call.publish(progress{name: eventDelta, data: b})
				}
			},
		})
		_, pos, err := h.app.Commands.SynthesizeAnswer.Handle(rctx, commands.SynthesizeAnswer{Request: req, Metadata: md})
		if err != nil {
			return answercache.CachedAnswer{}, err
		}
		if h.d.App.WaitFor != nil {
			if err := h.d.App.WaitFor(rctx, answercache.Name, pos); err != nil {
				return answercache.CachedAnswer{}, fmt.Errorf("waiting for the answer cache: %w", err)
			}
		}
		return h.app.Queries.AnswerCache.Lookup(rctx, key, h.d.App.Now())
	})
	var see func(progress)
	if s != nil {
		see = func(p progress) { s.send(p.name, p.data) }
	}
	a, err := h.flight.wait(ctx, key, call, see)
	if err != nil {
		return answercache.CachedAnswer{}, err
	}
	h.memo.put(a)
	return a, nil
}

// memo keeps cache entries in process. Entries are immutable until they
// expire (a key gets a new entry only after its old one expired), so a
// memoized entry is served exactly while the read model would serve it.
type memo struct {
	mu  sync.RWMutex
	m   map[string]answercache.CachedAnswer
	max int
}

func newMemo(max int) *memo { return &memo{m: map[string]answercache.CachedAnswer{}, max: max} }

func (m *memo) get(key string, now time.Time) (answercache.CachedAnswer, bool) {
	m.mu.RLock()
	a, ok := m.m[key]
	m.mu.RUnlock()
	if !ok || !now.Before(a.ExpiresAt) {
		return answercache.CachedAnswer{}, false
	}
	return a, true
}

func (m *memo) put(a answercache.CachedAnswer) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.m) >= m.max {
		for k := range m.m { // drop about a quarter, arbitrary ones
			delete(m.m, k)
			if len(m.m) < m.max*3/4 {
				break
			}
		}
	}
	m.m[a.CacheKey] = a
}
