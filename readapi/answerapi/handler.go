package answerapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
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
	// resolved keeps follow-up resolutions, so a cached follow-up asked
	// again asks no model.
	resolved *resolutions
}

// body is the POST body.
type body struct {
	Q              *string         `json:"q"`
	Tier           string          `json:"tier"`
	Mode           string          `json:"mode"`
	IncludeDomains json.RawMessage `json:"include_domains"`
	ExcludeDomains json.RawMessage `json:"exclude_domains"`
	TimeRange      json.RawMessage `json:"time_range"`
	StartDate      json.RawMessage `json:"start_date"`
	EndDate        json.RawMessage `json:"end_date"`
	Messages       json.RawMessage `json:"messages"`
	// Stream asks for server-sent events (true or false).
	Stream json.RawMessage `json:"stream"`
	// ResponseFormat asks for the answer as JSON against a schema
	// (research.ParseResponseFormat).
	ResponseFormat json.RawMessage `json:"response_format"`
}

// get is GET /api/v1/answer. Its query parameters are each given once but
// for the lists (httpx.CheckQueryLists), as every route's are; messages is
// named so that ParseQuery says where it belongs.
func (h *handler) get(c *gin.Context) error {
	if err := httpx.CheckQueryLists(c.Request.URL.RawQuery, []string{"include_domains", "exclude_domains"},
		"q", "tier", "mode", "include_domains", "exclude_domains", "time_range", "start_date", "end_date", "messages"); err != nil {
		return err
	}
	req, err := ParseQuery(c.Request.URL.Query(), h.app.Now())
	return h.answer(c, req, wantsStream(c, false), err)
}

func (h *handler) post(c *gin.Context) error {
	req, stream, err := parseBody(c.Request.Body, h.app.Now())
	return h.answer(c, req, wantsStream(c, stream), err)
}

// ParseQuery reads the question of GET /api/v1/answer from its query
// parameters q, tier and mode, and its filters: include_domains and
// exclude_domains (repeated, or comma-separated), time_range, start_date
// and end_date; a time range is resolved against now.
func ParseQuery(v url.Values, now time.Time) (answer.Request, error) {
	if _, ok := v["messages"]; ok {
		return answer.Request{}, domain.Invalid("messages_not_in_query", "messages", "messages (the earlier turns of a conversation) are taken only in a POST body: POST /api/v1/answer with {\"q\":\"…\",\"messages\":[…]}")
	}
	q, ok := v["q"]
	first := ""
	if ok && len(q) > 0 {
		first = q[0]
	}
	req, err := answer.ParseRequest(first, ok, v.Get("tier"), v.Get("mode"))
	if err != nil {
		return answer.Request{}, err
	}
	include, err := listParam("include_domains", v["include_domains"])
	if err != nil {
		return answer.Request{}, err
	}
	exclude, err := listParam("exclude_domains", v["exclude_domains"])
	if err != nil {
		return answer.Request{}, err
	}
	req.Filters, err = answer.ParseFilters(answer.FilterInput{IncludeDomains: asciiNames(include), ExcludeDomains: asciiNames(exclude),
		TimeRange: v.Get("time_range"), StartDate: v.Get("start_date"), EndDate: v.Get("end_date")}, now)
	return req, err
}

// listParam is a repeated query parameter's values, each split at commas
// (an empty value names nothing), read verbatim (domain.Verbatim): a
// space in or around a name is refused, naming field.
func listParam(field string, vs []string) ([]string, error) {
	var out []string
	for _, v := range vs {
		if err := domain.Verbatim(field, v); err != nil {
			return nil, err
		}
		for _, n := range strings.Split(v, ",") {
			if n != "" {
				out = append(out, n)
			}
		}
	}
	return out, nil
}

// ParseBody reads the question of POST /api/v1/answer from its JSON body
// (its stream field is checked, not returned); a time range is resolved
// against now.
func ParseBody(r io.Reader, now time.Time) (answer.Request, error) {
	req, _, err := parseBody(r, now)
	return req, err
}

// parseBody reads the question of POST /api/v1/answer and whether it asks
// for a stream.
func parseBody(r io.Reader, now time.Time) (answer.Request, bool, error) {
	var b body
	raw, err := httpx.ReadJSON(r)
	if err != nil {
		return answer.Request{}, false, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		if f := httpx.UnknownField(err); f != "" {
			return answer.Request{}, false, domain.Invalid("unknown_field", f, "unknown field %q: the body takes only q, tier, mode, include_domains, exclude_domains, time_range, start_date, end_date, messages, stream and response_format; see /openapi.json", f)
		}
		return answer.Request{}, false, domain.Invalid("invalid_json", "", "the body must be a JSON object like {\"q\":\"…\",\"tier\":\"free\",\"mode\":\"quick\",\"stream\":false}: %v", err)
	}
	q := ""
	if b.Q != nil {
		q = *b.Q
	}
	req, err := answer.ParseRequest(q, b.Q != nil, b.Tier, b.Mode)
	if err != nil {
		return answer.Request{}, false, err
	}
	var in answer.FilterInput
	if in.IncludeDomains, err = stringsField("include_domains", b.IncludeDomains); err != nil {
		return answer.Request{}, false, err
	}
	if in.ExcludeDomains, err = stringsField("exclude_domains", b.ExcludeDomains); err != nil {
		return answer.Request{}, false, err
	}
	for _, f := range []struct {
		name string
		raw  json.RawMessage
		dst  *string
	}{{"time_range", b.TimeRange, &in.TimeRange}, {"start_date", b.StartDate, &in.StartDate}, {"end_date", b.EndDate, &in.EndDate}} {
		if *f.dst, err = stringField(f.name, f.raw); err != nil {
			return answer.Request{}, false, err
		}
	}
	in.IncludeDomains, in.ExcludeDomains = asciiNames(in.IncludeDomains), asciiNames(in.ExcludeDomains)
	if req.Filters, err = answer.ParseFilters(in, now); err != nil {
		return answer.Request{}, false, err
	}
	if req.Messages, err = parseMessages(b.Messages); err != nil {
		return answer.Request{}, false, err
	}
	if req.Format, err = research.ParseResponseFormat(b.ResponseFormat); err != nil {
		return answer.Request{}, false, err
	}
	stream, err := parseStream(b.Stream)
	return req, stream, err
}

// asciiNames are host names with internationalized ones in their ASCII
// form (research.ASCIIName).
func asciiNames(names []string) []string {
	if len(names) > answer.MaxDomains {
		return names // refused for their number
	}
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = research.ASCIIName(n)
	}
	return out
}

// stringsField decodes a JSON array of strings (null or absent: none).
func stringsField(name string, raw json.RawMessage) ([]string, error) {
	var out []string
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, domain.Invalid("invalid_"+name, name, "%s must be a JSON array of host names, like [\"example.com\"]", name)
	}
	return out, nil
}

// stringField decodes a JSON string (null or absent: "").
func stringField(name string, raw json.RawMessage) (string, error) {
	var out string
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return "", domain.Invalid("invalid_"+name, name, "%s must be a JSON string", name)
	}
	return out, nil
}

// parseMessages reads the conversation's earlier turns: absent, null or
// [] is none; anything else must be an array of {"role","content"}
// objects (nothing else: an unknown field is refused, as in every body of
// arr's own APIs) that answer.CheckMessages accepts.
func parseMessages(raw json.RawMessage) ([]answer.Message, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	const shape = `an array of earlier turns like [{"role":"user","content":"…"},{"role":"assistant","content":"…"}]`
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, domain.Invalid("messages_invalid", "messages", "messages must be %s", shape)
	}
	if len(items) > answer.MaxTurns {
		return nil, answer.CheckMessages(make([]answer.Message, len(items)))
	}
	ms := make([]answer.Message, 0, len(items))
	for i, it := range items {
		var m struct {
			Role    *string `json:"role"`
			Content *string `json:"content"`
		}
		dec := json.NewDecoder(bytes.NewReader(it))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&m); err != nil {
			field := fmt.Sprintf("messages[%d]", i)
			if f := httpx.UnknownField(err); f != "" {
				return nil, domain.Invalid("unknown_field", field+"."+f, "%s has an unknown field %q: a turn is {\"role\",\"content\"} and nothing else", field, f)
			}
			return nil, domain.Invalid("messages_invalid", field, "%s must be an object with a string role (\"user\" or \"assistant\") and a string content: %v", field, err)
		}
		var msg answer.Message
		if m.Role != nil {
			msg.Role = *m.Role
		}
		if m.Content != nil {
			msg.Content = *m.Content
		}
		ms = append(ms, msg)
	}
	if len(ms) == 0 {
		return nil, nil
	}
	return ms, answer.CheckMessages(ms)
}

// response is the answer body.
type response struct {
	Query         string            `json:"query"`
	ResolvedQuery string            `json:"resolved_query"`
	Answer        string            `json:"answer"`
	Citations     []answer.Citation `json:"citations"`
	Sources       []answer.Source   `json:"sources"`
	Tier          answer.Tier       `json:"tier"`
	Mode          answer.Mode       `json:"mode"`
	Cached        bool              `json:"cached"`
	Synthesis     string            `json:"synthesis"`
	AnswerFound   bool              `json:"answer_found"`
	SubQuestions  []string          `json:"sub_questions,omitempty"`
	AnswerID      string            `json:"answer_id"`
	SynthesizedAt time.Time         `json:"synthesized_at"`
	ExpiresAt     time.Time         `json:"expires_at"`
}

func (h *handler) answer(c *gin.Context, req answer.Request, stream bool, err error) error {
	if err != nil {
		return err
	}
	var s *sse
	var st streamer
	if stream {
		s = &sse{c: c}
		st = s
	}
	r, ok, err := h.serve(c, req, st)
	if err != nil || !ok {
		return err
	}
	a := r.a
	resp := response{Query: r.req.Query, ResolvedQuery: r.req.Question(), Answer: a.Answer,
		Citations: citations(r.req, a.Answer), Sources: withSnippets(a.Answer, a.Sources), Tier: r.req.Tier, Mode: r.req.Mode,
		Cached: r.cached, Synthesis: string(a.Synthesis), AnswerFound: a.AnswerFound, SubQuestions: a.SubQuestions, AnswerID: a.AnswerID.String(),
		SynthesizedAt: a.SynthesizedAt, ExpiresAt: a.ExpiresAt}
	if s == nil {
		c.JSON(http.StatusOK, resp)
		return nil
	}
	s.whole(resp.Sources, a.Answer)
	s.sendJSON(eventDone, resp)
	return nil
}

// citations are the answer's citation spans: in a structured answer (JSON
// text) only the markers inside its strings.
func citations(req answer.Request, text string) []answer.Citation {
	if req.Format.Structured() {
		return answer.JSONCitationSpans(text)
	}
	return answer.CitationSpans(text)
}

// modelUnavailable: err is a structured answer's model that did not
// answer (model_unavailable), not the search.
func modelUnavailable(err error) bool {
	var de *domain.Error
	return errors.As(err, &de) && de.Code == "model_unavailable"
}

// result is one answer served, as a route presents it.
type result struct {
	req    answer.Request // resolved against its earlier turns
	a      answercache.CachedAnswer
	cached bool
}

// streamer writes a streamed answer: arr's own events (sse) or the
// Sonar-compatible route's chunks (sonarStream). send takes arr's event
// names and data (eventSources, eventDelta).
type streamer interface {
	send(name string, data []byte)
	// begun reports whether anything was sent (the status is written).
	begun() bool
	// fail ends a begun stream with err.
	fail(err error)
}

// serve is the one command path of every answer route: the plan check,
// the follow-up resolution, the cache (memo, read model), the synthesis
// (shared per cache key) and the AnswerServed record. With s set it
// streams the synthesis's progress to s. ok is false when the response
// is already handled (a streaming client hung up, or a begun stream was
// ended with its error): the caller writes nothing more. An error is
// returned only while nothing was sent.
func (h *handler) serve(c *gin.Context, req answer.Request, s streamer) (result, bool, error) {
	p, _ := httpx.PrincipalOf(c)
	if err := req.Authorize(p.Plan); err != nil {
		return result{}, false, err
	}
	if check := h.app.Answers.CheckFormat; check != nil {
		if err := check(req.Format); err != nil {
			return result{}, false, err
		}
	}
	ctx := c.Request.Context()
	if len(req.Messages) > 0 && h.app.Answers.Resolve != nil {
		req.Resolve(h.resolved.resolve(ctx, h.app.Now(), req.Query, req.Messages, h.app.Answers.Resolve))
	}
	if gen := h.app.Answers.Generation; gen != nil {
		var err error
		if req.Generation, err = gen(ctx); err != nil {
			return result{}, false, err
		}
	}
	key := req.CacheKey()
	cached := true
	a, err := h.lookup(ctx, key)
	if errors.Is(err, answercache.ErrNoCachedAnswer) {
		cached = false
		var see func(progress)
		if s != nil {
			see = func(p progress) { s.send(p.name, p.data) }
		}
		a, err = h.synthesize(ctx, req, httpx.CommandMetadata(c, "key:"+p.KeyID.String()), see)
	}
	if err != nil {
		return result{}, false, h.failed(c, s, err)
	}
	served := answer.AnswerServed{AccountID: p.AccountID, KeyID: p.KeyID, CacheKey: key, AnswerID: a.AnswerID,
		Tier: req.Tier, Mode: req.Mode, Cached: cached, ServedAt: h.app.Now().UTC()}
	if len(req.Messages) > 0 {
		served.ResolvedQuery, served.Turns = req.Question(), len(req.Messages)
	}
	h.app.Answers.Served.Record(served)
	return result{req: req, a: a, cached: cached}, true, nil
}

// failed handles an answer that failed: nil when it is handled here (the
// streaming client hung up; a begun stream ends with the error event),
// else the error to answer with (web search down is a 503 with
// Retry-After).
func (h *handler) failed(c *gin.Context, s streamer, err error) error {
	if s != nil && c.Request.Context().Err() != nil {
		// The client hung up: nothing more is sent and no answer is
		// recorded as served; the call stays counted (quota and meter),
		// as a plain call whose client hangs up is.
		if !s.begun() {
			c.Abort()
		}
		return nil
	}
	if errors.Is(err, domain.ErrUnavailable) && !errors.Is(err, context.DeadlineExceeded) && !modelUnavailable(err) {
		secs := int(searchRetryAfter.Seconds())
		err = &domain.Error{Kind: domain.ErrUnavailable, Code: "search_unavailable",
			Message: fmt.Sprintf("web search is temporarily unavailable; retry in %d seconds", secs)}
		if s == nil || !s.begun() {
			c.Header("Retry-After", strconv.Itoa(secs))
		}
	}
	if s != nil && s.begun() {
		s.fail(err)
		return nil
	}
	return err
}

// withSnippets returns sources with every Snippet set: an answer recorded
// before snippets were (AnswerSynthesized version 2) gets the one
// answer.Snippet cuts from its Content.
func withSnippets(text string, srcs []answer.Source) []answer.Source {
	if srcs == nil {
		return []answer.Source{}
	}
	var used [][]string
	out := srcs
	for i, s := range srcs {
		if s.Snippet != "" {
			continue
		}
		if used == nil {
			used = answer.CitedText(text, len(srcs))
			out = append([]answer.Source(nil), srcs...)
		}
		out[i].Snippet = answer.Snippet(s.Content, used[i])
	}
	return out
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
// asker's: the event it appends carries that request's id. With see set
// the asker is told of the synthesis's sources and deltas as they come
// (those before it joined first: a stream sends them, a research job
// records its steps), and gives up when ctx ends (a streaming client hung
// up, a job was canceled), which cancels the synthesis if no other asker
// shares it.
func (h *handler) synthesize(ctx context.Context, req answer.Request, md commands.Metadata, see func(progress)) (answercache.CachedAnswer, error) {
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
			Cut: call.cut,
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
