package complete

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/routing"
)

// gatewayFields are the request fields the gateway reads and does not send
// upstream.
var gatewayFields = []string{"quality_floor", "max_cost_usd", "brand_pref"}

// Request is a validated chat-completion request: its top-level fields as
// sent (all passed upstream unchanged, except the model, the max-tokens
// field, stream_options and the gateway's own fields) and what routing
// reads of them. readapi/gateway's parser makes one from a
// /v1/chat/completions body; a route that speaks another API builds the
// chat request it translates to.
type Request struct {
	// Fields are the request's top-level fields.
	Fields map[string]json.RawMessage
	// Body is what the client sent; its keyed hash is the audit entry's
	// request_hash.
	Body []byte
	// Model is "auto" (or empty), a tier name or a model id.
	Model        string
	Stream       bool
	IncludeUsage bool // stream_options.include_usage
	Messages     []routing.Message
	Tools        int // how many tools are offered
	JSONMode     bool
	Temperature  *float64
	// MaxTokens is the request's cap on output tokens (0: none), sent in
	// MaxTokensField ("max_tokens" or "max_completion_tokens").
	MaxTokens      int64
	MaxTokensField string
	QualityFloor   float64
	MaxCostMicro   int64 // 0: no ceiling
	BrandPref      string
	// Native is the request in an upstream API's own format, for a
	// candidate of that API (native.go); nil: a chat request only.
	Native *Native
	// APIs are the upstream APIs the request can be sent to, preferred
	// first (routing.Request.APIs); nil: every API (ChatAPIs: wire.go
	// translates a chat request to each), in the catalog's order.
	APIs []string

	// estimate is PromptEstimate once the messages' text was let go
	// (keepEstimate); 0: not yet.
	estimate int64
}

// keepEstimate remembers the prompt estimate and lets the messages' text
// go: once a request is routed, its text is in Fields (what goes
// upstream) and need not be held twice while it runs.
func (r *Request) keepEstimate() {
	if r.estimate == 0 {
		r.estimate = max(r.PromptEstimate(), 1)
	}
	r.Messages = nil
}

// Route asks domain/routing for the tier and the failover order.
func (r *Request) Route(cat *routing.Catalog, fb routing.Feedback, brandPrefAllowed bool) (routing.Decision, error) {
	return r.RouteAllowed(cat, fb, brandPrefAllowed, nil, nil)
}

// RouteAllowed is Route among the models allow lets the caller's key use
// (nil: every model); allowNames is that limit as the key names it, for
// refusals.
//
// Under a max_cost_usd ceiling, a pass-through request's server-side web
// searches (serverToolMicro) are priced first: the tokens are routed under
// what the ceiling leaves; a web_search tool without max_uses has no
// bound and is refused (web_search_unbounded).
func (r *Request) RouteAllowed(cat *routing.Catalog, fb routing.Feedback, brandPrefAllowed bool, allow func(id, tier string) bool, allowNames []string) (routing.Decision, error) {
	ceiling := r.MaxCostMicro
	if ceiling > 0 {
		fixed, bounded := r.serverToolMicro()
		if !bounded {
			return routing.Decision{}, domain.Invalid("web_search_unbounded", "tools",
				"under max_cost_usd a web_search tool needs max_uses: each search is billed apart from the tokens ($10 per 1,000), and without max_uses their number has no bound")
		}
		ceiling = max(ceiling-fixed, 1)
	}
	return routing.Route(cat, fb, routing.Request{
		Model: r.Model, QualityFloor: r.QualityFloor, MaxCostMicro: ceiling,
		BrandPref: r.BrandPref, BrandPrefAllowed: brandPrefAllowed, Allow: allow, AllowNames: allowNames,
		Difficulty:  routing.Difficulty(routing.Features{Messages: r.Messages, Tools: r.Tools, JSONMode: r.JSONMode}),
		InputTokens: r.PromptEstimate(), MaxTokens: r.MaxTokens, APIs: r.apis(),
	})
}

// serverToolMicro is the most a pass-through request's server-side web
// searches can cost (each web_search tool's max_uses at
// routing.WebSearchMicroUSD), read by exact member names as the upstream
// reads them; false: a web_search tool without max_uses (no bound).
func (r *Request) serverToolMicro() (int64, bool) {
	if r.Native == nil {
		return 0, true
	}
	var body map[string]json.RawMessage
	var tools []map[string]json.RawMessage
	if json.Unmarshal(r.Native.Body, &body) != nil || json.Unmarshal(body["tools"], &tools) != nil {
		return 0, true
	}
	var n int64
	for _, t := range tools {
		var typ string
		if json.Unmarshal(t["type"], &typ) != nil || !strings.HasPrefix(typ, "web_search") {
			continue
		}
		var uses int64
		if json.Unmarshal(t["max_uses"], &uses) != nil || uses < 0 {
			return 0, false
		}
		n += min(uses, routing.MaxTokenCount)
	}
	return n * routing.WebSearchMicroUSD, true
}

// ChatAPIs are the upstream APIs a chat completion request can be sent
// to: every API this build speaks (wire.go translates to each).
func ChatAPIs() []string { return routing.SupportedAPIs() }

// apis is routing's Request.APIs: nil (every API, no preference among
// them) for a chat request.
func (r *Request) apis() []string { return r.APIs }

// PromptEstimate is the prompt's size in tokens as estimated from the
// messages, tools and response format: what routing (and the context
// window and cost checks) counts, and what POST /v1/messages/count_tokens
// answers. A pass-through request's whose translation leaves part of the
// body out (Native.Untranslated) is at least its body's bytes over 3
// (EstimateTokens' rule): its own API's candidates are sent the body,
// every byte of which they read and bill.
func (r *Request) PromptEstimate() int64 {
	if r.estimate > 0 {
		return r.estimate
	}
	n := routing.EstimateTokens(r.Messages, len(r.Fields["tools"])+len(r.Fields["response_format"]))
	if r.Native != nil && r.Native.Untranslated {
		n = max(n, int64(len(r.Native.Body)+2)/3)
	}
	return n
}

// UpstreamBody is the request to send to candidate c: the client's fields,
// the model replaced, the gateway's fields removed, max tokens capped, and
// for streams include_usage forced on (so real usage is recorded).
func (r *Request) UpstreamBody(c routing.Candidate) ([]byte, error) {
	out := make(map[string]json.RawMessage, len(r.Fields)+2)
	for k, v := range r.Fields {
		out[k] = v
	}
	for _, f := range gatewayFields {
		delete(out, f)
	}
	out["model"], _ = json.Marshal(c.Model.UpstreamModel)
	if c.MaxTokens > 0 {
		field := r.MaxTokensField
		if field == "" {
			field = "max_tokens"
		}
		out[field], _ = json.Marshal(c.MaxTokens)
	}
	if r.Stream {
		out["stream_options"] = json.RawMessage(`{"include_usage":true}`)
	}
	return json.Marshal(out)
}

// CacheKey identifies the request for the response cache: the account
// and every field but stream and stream_options (so a stream can replay a
// cached reply and the other way round), keys sorted.
func (r *Request) CacheKey(account string) string {
	m := make(map[string]json.RawMessage, len(r.Fields))
	for k, v := range r.Fields {
		if k != "stream" && k != "stream_options" {
			m[k] = v
		}
	}
	b, _ := json.Marshal(m)
	h := sha256.New()
	h.Write([]byte(account))
	h.Write([]byte{0})
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}

// autoCacheable is the automatic cache rule: temperature 0 and no tools.
func (r *Request) autoCacheable() bool {
	return r.Temperature != nil && *r.Temperature == 0 && r.Tools == 0
}
