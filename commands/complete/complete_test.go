package complete_test

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/arr-dev/arr/adapters/upstream/upstreamtest"
	"github.com/arr-dev/arr/commands/complete"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/audit"
)

// TestHandleRecordsTheReply: a completion is routed, answered by the
// first candidate and in the audit chain, with what the reply says, before
// the reply is returned.
func TestHandleRecordsTheReply(t *testing.T) {
	hs := newHarness(t, options{startChain: true})
	req := request(t, "Say hello", nil)
	res, err := hs.complete(t, req, complete.CacheAuto)
	if err != nil {
		t.Fatal(err)
	}
	if res.Stream != nil {
		t.Fatal("a stream for a request without stream")
	}
	rep := res.Reply
	var body struct {
		Choices []struct {
			Message struct{ Content string } `json:"message"`
		} `json:"choices"`
		Usage struct {
			PromptTokens     int64 `json:"prompt_tokens"`
			CompletionTokens int64 `json:"completion_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(rep.Body, &body); err != nil || len(body.Choices) != 1 || body.Choices[0].Message.Content != "Hello from gpt-4.1-nano: Say hello" {
		t.Fatalf("reply %s (%v)", rep.Body, err)
	}
	ri := rep.Routing
	if ri.Tier != "nano" || ri.Model != "gpt-4.1-nano" || ri.Vendor != "openai" || ri.Attempts != 1 || ri.CacheHit || !audit.ValidHash(ri.AuditHash) {
		t.Fatalf("routing %+v", ri)
	}
	es := hs.entries(t)
	if len(es) != 1 {
		t.Fatalf("%d audit entries, want 1", len(es))
	}
	e, c := es[0], es[0].Completion
	if e.Hash != ri.AuditHash || e.Position != ri.AuditPosition {
		t.Fatalf("entry %s at %d; the reply says %s at %d", e.Hash, e.Position, ri.AuditHash, ri.AuditPosition)
	}
	want := audit.Completion{
		AccountID: hs.caller.AccountID, KeyID: hs.caller.KeyID, RequestHash: hs.key.Sum(req.Body), ResponseHash: hs.key.Sum(rep.Body),
		Tier: "nano", Model: "gpt-4.1-nano", Vendor: "openai", PromptTokens: body.Usage.PromptTokens, CompletionTokens: body.Usage.CompletionTokens,
		CostMicroUSD: int64(ri.CostUSD*1e6 + 0.5), Outcome: "ok", Attempts: 1, StartedAt: hs.clock.Now(),
	}
	if c.AccountID != want.AccountID || c.KeyID != want.KeyID || c.RequestHash != want.RequestHash || c.ResponseHash != want.ResponseHash ||
		c.Tier != want.Tier || c.Model != want.Model || c.Vendor != want.Vendor || c.PromptTokens != want.PromptTokens ||
		c.CompletionTokens != want.CompletionTokens || c.UsageEstimated || c.CostMicroUSD != want.CostMicroUSD || c.CostMicroUSD <= 0 ||
		c.Outcome != want.Outcome || c.Attempts != want.Attempts || !c.StartedAt.Equal(want.StartedAt) || c.Stream || c.CacheHit {
		t.Fatalf("audit payload\n got %+v\nwant %+v", c, want)
	}
	if rep.Usage != (complete.Usage{Prompt: body.Usage.PromptTokens, Completion: body.Usage.CompletionTokens}) {
		t.Fatalf("usage %+v", rep.Usage)
	}
}

// TestHandleFailover: retryable failures move on to the next candidate
// (the next tier when a tier is down, never past the ceiling); the
// upstream's refusal of the request itself is passed on. A completion that
// failed is not in the audit chain.
func TestHandleFailover(t *testing.T) {
	cases := []struct {
		name     string
		down     map[string]upstreamtest.Behavior
		fields   map[string]any
		model    string // who answers; "" for none
		attempts int
		check    func(t *testing.T, err error)
	}{
		{name: "a 500 goes to the next model of the tier", down: map[string]upstreamtest.Behavior{"gpt-4.1-nano": {Status: 500}},
			model: "gemini-2.0-flash-lite", attempts: 2},
		{name: "a tier down goes to the next tier", down: map[string]upstreamtest.Behavior{"gpt-4.1-nano": {Status: 503}, "gemini-2.0-flash-lite": {Status: 429}},
			model: "gpt-4.1-mini", attempts: 3},
		{name: "never past the ceiling", down: map[string]upstreamtest.Behavior{"gpt-4.1-nano": {Status: 503}, "gemini-2.0-flash-lite": {Status: 503}},
			fields: map[string]any{"max_cost_usd": 0.0002},
			check: func(t *testing.T, err error) {
				var uf *complete.UpstreamFailure
				if !errors.As(err, &uf) || len(uf.Attempts) != 2 {
					t.Fatalf("error %v, want an upstream failure after 2 attempts", err)
				}
			}},
		{name: "a 400 is the upstream's refusal", down: map[string]upstreamtest.Behavior{"gpt-4.1-nano": {Status: 400}},
			check: func(t *testing.T, err error) {
				var r *complete.Refused
				if !errors.As(err, &r) || r.Status != 400 || !json.Valid(r.Body) || !strings.Contains(string(r.Body), "injected failure") {
					t.Fatalf("error %v, want the upstream's 400 and its body", err)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hs := newHarness(t, options{startChain: true})
			for m, b := range tc.down {
				hs.up.Set(m, b)
			}
			res, err := hs.complete(t, request(t, "Say hello", tc.fields), complete.CacheAuto)
			if tc.model == "" {
				tc.check(t, err)
				if n := len(hs.entries(t)); n != 0 {
					t.Fatalf("a failed completion has %d audit entries", n)
				}
				if tc.name == "a 400 is the upstream's refusal" && hs.up.Calls("gemini-2.0-flash-lite") != 0 {
					t.Fatal("a refused request was sent to the next model")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ri := res.Reply.Routing; ri.Model != tc.model || ri.Attempts != tc.attempts {
				t.Fatalf("answered by %s after %d attempts, want %s after %d", ri.Model, ri.Attempts, tc.model, tc.attempts)
			}
			if es := hs.entries(t); len(es) != 1 || es[0].Completion.Model != tc.model || es[0].Completion.Attempts != tc.attempts {
				t.Fatalf("audit entries %+v", es)
			}
		})
	}
}

// TestHandleBreakerOpens: three failures in a row open a model's breaker;
// after that it is skipped without a call.
func TestHandleBreakerOpens(t *testing.T) {
	hs := newHarness(t, options{startChain: true})
	hs.up.Set("gpt-4.1-nano", upstreamtest.Behavior{Status: 429})
	for i := 0; i < 3; i++ {
		if _, err := hs.complete(t, request(t, "Say hello", nil), complete.CacheAuto); err != nil {
			t.Fatal(err)
		}
	}
	calls := hs.up.Calls("gpt-4.1-nano")
	hs.up.Reset() // healthy again; the breaker stays open for its minute
	res, err := hs.complete(t, request(t, "Say hello", nil), complete.CacheAuto)
	if err != nil {
		t.Fatal(err)
	}
	if got := hs.up.Calls("gpt-4.1-nano"); got != calls || res.Reply.Routing.Model != "gemini-2.0-flash-lite" || res.Reply.Routing.Attempts != 2 {
		t.Fatalf("with the breaker open: %d more calls, answered by %s after %d attempts", got-calls, res.Reply.Routing.Model, res.Reply.Routing.Attempts)
	}
	if st := hs.h.BreakerStates(); st["gpt-4.1-nano"] != "open" || st["gemini-2.0-flash-lite"] != "closed" {
		t.Fatalf("breakers %v", st)
	}
}

// TestHandleCache: a repeat of a cacheable request is answered from the
// cache, without an upstream call or cost, and is still recorded; a
// stream replays a cached reply; entries expire; the client's mode
// applies.
func TestHandleCache(t *testing.T) {
	hs := newHarness(t, options{startChain: true})
	zero := map[string]any{"temperature": 0}
	first, err := hs.complete(t, request(t, "Cache me", zero), complete.CacheAuto)
	if err != nil {
		t.Fatal(err)
	}
	again, err := hs.complete(t, request(t, "Cache me", zero), complete.CacheAuto)
	if err != nil {
		t.Fatal(err)
	}
	ri := again.Reply.Routing
	if !ri.CacheHit || ri.CostUSD != 0 || ri.Attempts != 0 || string(again.Reply.Body) != string(first.Reply.Body) || hs.up.Calls("gpt-4.1-nano") != 1 {
		t.Fatalf("repeat: routing %+v, %d upstream calls", ri, hs.up.Calls("gpt-4.1-nano"))
	}
	es := hs.entries(t)
	if len(es) != 2 || es[1].Hash != ri.AuditHash || !es[1].Completion.CacheHit || es[1].Completion.CostMicroUSD != 0 || es[1].Completion.Attempts != 0 {
		t.Fatalf("audit entries %+v", es)
	}

	// A stream of the same request replays the cached reply, recorded
	// before it starts.
	res, err := hs.complete(t, request(t, "Cache me", map[string]any{"temperature": 0, "stream": true}), complete.CacheAuto)
	if err != nil {
		t.Fatal(err)
	}
	if res.Stream == nil || !res.Stream.Routing().CacheHit || res.Stream.Routing().AuditHash == "" {
		t.Fatalf("replay: %+v", res)
	}
	chunks, err := drain(t, res.Stream)
	if !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	if got := contentOf(chunks); got != "Hello from gpt-4.1-nano: Cache me" {
		t.Fatalf("replayed content %q", got)
	}
	if end := res.Stream.End(); end.Routing.AuditHash != res.Stream.Routing().AuditHash || end.Cut != nil || end.ID != "chatcmpl-test" {
		t.Fatalf("replay end %+v", end)
	}
	if es := hs.entries(t); len(es) != 3 || !es[2].Completion.Stream || !es[2].Completion.CacheHit || hs.up.Calls("gpt-4.1-nano") != 1 {
		t.Fatalf("after the replay: %d entries, %d upstream calls", len(es), hs.up.Calls("gpt-4.1-nano"))
	}

	steps := []struct {
		name  string
		fresh bool
		mode  complete.CacheMode
		body  map[string]any
		hit   bool
	}{
		{name: "off is never served from the cache", mode: complete.CacheOff, body: zero},
		{name: "a temperature above 0 is not cached automatically", mode: complete.CacheAuto, body: map[string]any{"temperature": 0.7}},
		{name: "on caches it anyway", mode: complete.CacheOn, body: map[string]any{"temperature": 0.7}},
		{name: "and serves it again", mode: complete.CacheOn, body: map[string]any{"temperature": 0.7}, hit: true},
		{name: "an entry past the TTL is not served", fresh: true, mode: complete.CacheAuto, body: zero},
	}
	for _, s := range steps {
		if s.fresh {
			hs.clock.Add(time.Hour + time.Second)
		}
		calls := hs.up.Calls("gpt-4.1-nano")
		res, err := hs.complete(t, request(t, "Cache me", s.body), s.mode)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if res.Reply.Routing.CacheHit != s.hit || (hs.up.Calls("gpt-4.1-nano") == calls) != s.hit {
			t.Fatalf("%s: cache hit %v, upstream called %v", s.name, res.Reply.Routing.CacheHit, hs.up.Calls("gpt-4.1-nano") != calls)
		}
	}
	if st := hs.h.CacheStats(); st.Status != "ok" || st.Hits != 3 {
		t.Fatalf("cache stats %+v", st)
	}
}

// TestHandleStream: a stream is relayed chunk by chunk (the upstream's
// usage chunk is held back for the closing chunk), then recorded with the
// upstream's usage; a stream cut off mid-way is recorded as cut.
func TestHandleStream(t *testing.T) {
	hs := newHarness(t, options{startChain: true})
	res, err := hs.complete(t, request(t, "Stream it", map[string]any{"stream": true}), complete.CacheAuto)
	if err != nil {
		t.Fatal(err)
	}
	st := res.Stream
	if st == nil || st.Routing().AuditHash != "" || st.Routing().Model != "gpt-4.1-nano" {
		t.Fatalf("stream %+v", res)
	}
	chunks, err := drain(t, st)
	if !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	if got := contentOf(chunks); got != "Hello from gpt-4.1-nano: Stream it" {
		t.Fatalf("content %q", got)
	}
	for _, ch := range chunks {
		if cs, _ := ch["choices"].([]any); len(cs) == 0 {
			t.Fatalf("the upstream's usage chunk was relayed: %v", ch)
		}
	}
	end := st.End()
	es := hs.entries(t)
	if len(es) != 1 || es[0].Hash != end.Routing.AuditHash || es[0].Position != end.Routing.AuditPosition {
		t.Fatalf("end %+v, entries %+v", end, es)
	}
	c := es[0].Completion
	if !c.Stream || c.Outcome != "ok" || c.UsageEstimated || c.PromptTokens != end.Usage.Prompt || c.CompletionTokens != end.Usage.Completion || end.Usage.Completion == 0 || end.Cut != nil {
		t.Fatalf("payload %+v, end %+v", c, end)
	}

	hs.up.Set("gpt-4.1-nano", upstreamtest.Behavior{CutAfter: 2})
	res, err = hs.complete(t, request(t, "Stream it again please", map[string]any{"stream": true}), complete.CacheAuto)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := drain(t, res.Stream); !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	end = res.Stream.End()
	es = hs.entries(t)
	if end.Cut == nil || end.Cut.Model != "gpt-4.1-nano" || len(es) != 2 || es[1].Hash != end.Routing.AuditHash || es[1].Completion.Outcome != "cut" || !es[1].Completion.UsageEstimated {
		t.Fatalf("cut stream: end %+v, entries %+v", end, es)
	}
}

// TestHandleRefusesWhatRoutingRefuses: a request routing cannot serve is
// a domain error, and nothing is called or recorded.
func TestHandleRefusesWhatRoutingRefuses(t *testing.T) {
	hs := newHarness(t, options{startChain: true})
	_, err := hs.complete(t, request(t, "Say hello", map[string]any{"model": "no-such-model"}), complete.CacheAuto)
	var de *domain.Error
	if !errors.As(err, &de) || !errors.Is(err, domain.ErrNotFound) && !errors.Is(err, domain.ErrInvalid) {
		t.Fatalf("error %v, want a domain error", err)
	}
	if len(hs.entries(t)) != 0 || hs.up.Calls("no-such-model") != 0 {
		t.Fatal("a refused request was called or recorded")
	}
}

// contentOf joins the content deltas of choice 0.
func contentOf(chunks []map[string]any) string {
	var b strings.Builder
	for _, ch := range chunks {
		cs, _ := ch["choices"].([]any)
		for _, c := range cs {
			m, _ := c.(map[string]any)
			if idx, _ := m["index"].(float64); idx != 0 {
				continue
			}
			d, _ := m["delta"].(map[string]any)
			if s, ok := d["content"].(string); ok {
				b.WriteString(s)
			}
		}
	}
	return b.String()
}
