package gateway

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	json "github.com/goccy/go-json"

	"github.com/arr-dev/arr/adapters/upstream"
	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/audit"
	"github.com/arr-dev/arr/domain/routing"
	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/projections"
	"github.com/arr-dev/arr/readapi/httpx"
)

// completer serves POST /v1/chat/completions. Safe for concurrent use.
type completer struct {
	d     httpx.Deps
	rt    Routing
	cache *cache
	fb    *feedbackView
	m     *metrics
}

// errNotConfigured answers routes that need Routing when it is missing.
var errNotConfigured = &domain.Error{Kind: domain.ErrUnavailable, Code: "routing_not_configured", Message: "the gateway's routing is not configured"}

// usage is a completion's token counts.
type usage struct {
	Prompt     int64
	Completion int64
	Estimated  bool
}

// routingInfo is the routing object of every completion.
type routingInfo struct {
	Tier             string  `json:"tier"`
	Model            string  `json:"model"`
	Vendor           string  `json:"vendor"`
	DifficultyScore  float64 `json:"difficulty_score"`
	AuditHash        string  `json:"audit_hash"`
	CostPer1K        float64 `json:"cost_per_1k"`
	CostUSD          float64 `json:"cost_usd"`
	CacheHit         bool    `json:"cache_hit"`
	ElapsedSec       float64 `json:"elapsed_sec"`
	Attempts         int     `json:"attempts"`
	PredictedQuality float64 `json:"predicted_quality"`
	AuditPosition    uint64  `json:"audit_position"`
}

// upstreamFailure says every candidate failed.
type upstreamFailure struct {
	attempts []string
}

func (e *upstreamFailure) Error() string {
	return fmt.Sprintf("no upstream could answer (%d tried: %s); retry shortly", len(e.attempts), strings.Join(e.attempts, "; "))
}

// passThrough is an upstream's refusal of the request itself (a 4xx other
// than 408/429), passed on with its status and body.
type passThrough struct{ up *upstream.Error }

func (p passThrough) Error() string { return p.up.Error() }

// call is one completion in progress.
type call struct {
	start   time.Time
	p       projections.Principal
	req     *chatRequest
	dec     routing.Decision
	cacheOn bool
	key     string
	md      eventstore.Metadata
}

func (s *completer) handle(c *gin.Context) {
	if !s.rt.configured() {
		fail(c, errNotConfigured)
		return
	}
	k := &call{start: time.Now()}
	k.p, _ = httpx.PrincipalOf(c)
	body, err := io.ReadAll(c.Request.Body)
	if err != nil {
		fail(c, err)
		return
	}
	if k.req, err = parseChatRequest(body); err != nil {
		fail(c, err)
		return
	}
	if sent, ok := c.Get(auditedBodyKey); ok { // POST /v1/responses: audit the body as the client sent it
		k.req.body = sent.([]byte)
	}
	diff := routing.Difficulty(k.req.features())
	k.dec, err = routing.Route(s.rt.Catalog, s.fb.get(), routing.Request{
		Model: k.req.model, QualityFloor: k.req.qualityFloor, MaxCostMicro: k.req.maxCostMicro,
		BrandPref: k.req.brandPref, BrandPrefAllowed: k.p.Plan.Offer().Limits.BrandPref, Difficulty: diff,
		InputTokens: routing.EstimateTokens(k.req.messages, k.req.extraBytes()), MaxTokens: k.req.maxTokens,
	})
	if err != nil {
		fail(c, err)
		return
	}
	k.md = eventstore.Metadata{Actor: "key:" + k.p.KeyID.String(), RequestID: c.GetString("request_id"), CorrelationID: c.GetString("request_id")}
	switch strings.ToLower(c.GetHeader("X-Arr-Cache")) {
	case "on", "true", "1":
		k.cacheOn = s.cache.enabled()
	case "off", "false", "0":
	default:
		k.cacheOn = s.cache.enabled() && k.req.autoCacheable()
	}
	if k.cacheOn {
		k.key = k.req.cacheKey(k.p.AccountID.String())
		if hit, ok := s.cache.get(k.key, time.Now()); ok {
			s.serveCached(c, k, hit)
			return
		}
	}
	resp, attempts, err := s.dispatch(c.Request.Context(), k)
	if err != nil {
		s.failCall(c, err)
		return
	}
	if k.req.stream {
		s.stream(c, k, resp, attempts)
		return
	}
	s.complete(c, k, resp, attempts)
}

// dispatch tries the candidates in order until one answers: on a 5xx,
// 429, timeout, connection failure or open breaker (for a stream: also a
// stream that breaks before its first event) it moves on; a 4xx of the
// request's own passes through.
func (s *completer) dispatch(ctx context.Context, k *call) (*upstream.Response, int, error) {
	var tried []string
	for i, cand := range k.dec.Candidates {
		body, err := k.req.upstreamBody(routingCandidate{upstreamModel: cand.Model.UpstreamModel, maxTokens: cand.MaxTokens})
		if err != nil {
			return nil, i, err
		}
		resp, err := s.rt.Upstream.Complete(ctx, cand.Model, body, k.req.stream)
		if err == nil {
			s.m.upstream.WithLabelValues(cand.Model.ID).Observe(resp.FirstByte.Seconds())
		}
		if err == nil && k.req.stream {
			err = resp.Stream.Peek()
			if err != nil {
				resp.Stream.Close()
				err = &upstream.Error{Model: cand.Model.ID, Retryable: true, Err: err}
			}
		}
		if err == nil {
			k.dec.Candidates = k.dec.Candidates[i:]
			return resp, i + 1, nil
		}
		var ue *upstream.Error
		if errors.As(err, &ue) && !ue.Retryable {
			return nil, i + 1, passThrough{ue}
		}
		if ctx.Err() != nil {
			return nil, i + 1, ctx.Err()
		}
		tried = append(tried, fmt.Sprintf("%s: %v", cand.Model.ID, errors.Unwrap(err)))
		s.m.failovers.WithLabelValues(cand.Model.ID).Inc()
		s.d.Logger.Warn("upstream failed; trying the next", "model", cand.Model.ID, "err", err, "request_id", k.md.RequestID)
	}
	return nil, len(tried), &upstreamFailure{attempts: tried}
}

func (s *completer) failCall(c *gin.Context, err error) {
	var pt passThrough
	if errors.As(err, &pt) && json.Valid(pt.up.Body) {
		c.Data(pt.up.Status, "application/json", pt.up.Body)
		return
	}
	fail(c, err)
}

// record appends the completion to the audit chain (waiting for the
// commit, even if the client has gone). Its request hash, like respHash,
// is keyed (Routing.HashKey), so it cannot confirm a guessed body.
func (s *completer) record(c *gin.Context, k *call, m routing.Model, u usage, respHash string, cacheHit bool, outcome string, attempts int, upstreamTime time.Duration) (commands.Recorded, int64, error) {
	cost := int64(0)
	if !cacheHit {
		cost = m.Cost(u.Prompt, u.Completion)
	}
	timeout := s.rt.RecordTimeout
	if timeout <= 0 {
		timeout = 15 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.Request.Context()), timeout)
	defer cancel()
	rec, err := s.rt.Chain.Record(ctx, commands.RecordCompletion{Metadata: k.md, Completion: audit.Completion{
		AccountID: k.p.AccountID, KeyID: k.p.KeyID, RequestID: k.md.RequestID, RequestHash: s.rt.HashKey.Sum(k.req.body), ResponseHash: respHash,
		Tier: m.Tier, Model: m.ID, Vendor: m.Vendor, Difficulty: k.dec.Difficulty, Stream: k.req.stream,
		PromptTokens: u.Prompt, CompletionTokens: u.Completion, UsageEstimated: u.Estimated, CostMicroUSD: cost,
		CacheHit: cacheHit, Outcome: outcome, Attempts: attempts, UpstreamMS: ms(upstreamTime),
		TotalMS: ms(time.Since(k.start)), StartedAt: k.start.UTC(),
	}})
	if err == nil {
		s.m.completed(m.Tier, m.ID, outcome, cacheHit, u, cost)
	}
	return rec, cost, err
}

func ms(d time.Duration) float64 { return math.Round(float64(d.Microseconds())) / 1000 }

func (k *call) info(m routing.Model, rec commands.Recorded, cost int64, cacheHit bool, attempts int, pred float64) routingInfo {
	return routingInfo{
		Tier: m.Tier, Model: m.ID, Vendor: m.Vendor, DifficultyScore: k.dec.Difficulty, AuditHash: rec.Hash,
		CostPer1K: m.CostPer1KUSD(), CostUSD: float64(cost) / 1e6, CacheHit: cacheHit,
		ElapsedSec: math.Round(time.Since(k.start).Seconds()*1e6) / 1e6, Attempts: attempts,
		PredictedQuality: math.Round(pred*1000) / 1000, AuditPosition: rec.Position,
	}
}

// setRoutingHeaders writes the X-Arr-* headers known before the body.
func setRoutingHeaders(h http.Header, ri routingInfo) {
	h.Set("X-Arr-Tier", ri.Tier)
	h.Set("X-Arr-Model", ri.Model)
	h.Set("X-Arr-Difficulty-Score", strconv.FormatFloat(ri.DifficultyScore, 'f', -1, 64))
	h.Set("X-Arr-Cost-Per-1k", strconv.FormatFloat(ri.CostPer1K, 'f', -1, 64))
	h.Set("X-Arr-Cache-Hit", strconv.FormatBool(ri.CacheHit))
}

// replyShape is what the gateway reads of a non-streamed reply.
type replyShape struct {
	Choices []struct {
		FinishReason string `json:"finish_reason"`
		Message      struct {
			Content *string `json:"content"`
		} `json:"message"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int64 `json:"prompt_tokens"`
		CompletionTokens int64 `json:"completion_tokens"`
	} `json:"usage"`
	// Routing is set if the upstream sent a field of that name (another
	// gateway in front of the upstream); ours replaces it.
	Routing json.RawMessage `json:"routing"`
}

// complete finishes a non-streamed completion.
func (s *completer) complete(c *gin.Context, k *call, resp *upstream.Response, attempts int) {
	cand := k.dec.Candidates[0]
	var shape replyShape
	if err := json.Unmarshal(resp.Data, &shape); err != nil || objectEnd(resp.Data) < 0 {
		fail(c, &upstreamFailure{attempts: []string{cand.Model.ID + ": the reply is not a chat completion"}})
		return
	}
	u := usage{Estimated: true, Prompt: routing.EstimateTokens(k.req.messages, k.req.extraBytes())}
	if shape.Usage != nil {
		u = usage{Prompt: shape.Usage.PromptTokens, Completion: shape.Usage.CompletionTokens}
	} else {
		for _, ch := range shape.Choices {
			if ch.Message.Content != nil {
				u.Completion += int64(len(*ch.Message.Content)+3) / 4
			}
		}
	}
	rec, cost, err := s.record(c, k, cand.Model, u, s.rt.HashKey.Sum(resp.Data), false, "ok", attempts, resp.FirstByte)
	if err != nil {
		fail(c, err)
		return
	}
	if k.cacheOn && len(shape.Choices) == 1 && (shape.Choices[0].FinishReason == "stop" || shape.Choices[0].FinishReason == "length") {
		s.cache.put(k.key, cached{body: resp.Data, model: cand.Model.ID, tier: cand.Model.Tier, usage: u, stored: time.Now()})
	}
	ri := k.info(cand.Model, rec, cost, false, attempts, cand.Predicted)
	s.writeJSON(c, resp.Data, shape.Routing != nil, ri)
}

// objectEnd returns the index of the closing brace of a JSON object body
// (trailing whitespace allowed), or -1.
func objectEnd(body []byte) int {
	i := len(body) - 1
	for i >= 0 && (body[i] == ' ' || body[i] == '\n' || body[i] == '\r' || body[i] == '\t') {
		i--
	}
	if i < 1 || body[i] != '}' {
		return -1
	}
	return i
}

// withRouting adds the routing object to a completion body. The body is
// spliced, not decoded and encoded again: the upstream's fields go out
// byte for byte. A body that already has a "routing" field is rebuilt
// with ours in its place.
func withRouting(body []byte, hasRouting bool, ri routingInfo) ([]byte, error) {
	r, err := json.Marshal(ri)
	if err != nil {
		return nil, err
	}
	end := objectEnd(body)
	if hasRouting || end < 0 {
		var doc map[string]json.RawMessage
		if err := json.Unmarshal(body, &doc); err != nil {
			return nil, err
		}
		doc["routing"] = r
		return json.Marshal(doc)
	}
	out := make([]byte, 0, end+len(r)+16)
	out = append(out, body[:end]...)
	if bytes.TrimSpace(out)[len(bytes.TrimSpace(out))-1] != '{' {
		out = append(out, ',')
	}
	out = append(out, `"routing":`...)
	out = append(out, r...)
	return append(out, '}'), nil
}

func (s *completer) writeJSON(c *gin.Context, body []byte, hasRouting bool, ri routingInfo) {
	out, err := withRouting(body, hasRouting, ri)
	if err != nil {
		fail(c, err)
		return
	}
	h := c.Writer.Header()
	setRoutingHeaders(h, ri)
	h.Set("X-Arr-Audit-Hash", ri.AuditHash)
	h.Set("X-Arr-Elapsed-Sec", strconv.FormatFloat(ri.ElapsedSec, 'f', -1, 64))
	c.Data(http.StatusOK, "application/json", out)
}

// serveCached answers from the cache: no upstream call, no cost, still
// recorded in the audit chain.
func (s *completer) serveCached(c *gin.Context, k *call, hit cached) {
	m, ok := s.rt.Catalog.Model(hit.model)
	if !ok {
		m = k.dec.Candidates[0].Model
	}
	pred := k.dec.Candidates[0].Predicted
	rec, _, err := s.record(c, k, m, hit.usage, s.rt.HashKey.Sum(hit.body), true, "ok", 0, 0)
	if err != nil {
		fail(c, err)
		return
	}
	ri := k.info(m, rec, 0, true, 0, pred)
	if k.req.stream {
		s.replay(c, k, hit, ri)
		return
	}
	s.writeJSON(c, hit.body, bytes.Contains(hit.body, []byte(`"routing"`)), ri)
}
