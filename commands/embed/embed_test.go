package embed_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/adapters/upstream"
	"github.com/arr-dev/arr/adapters/upstream/upstreamtest"
	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/commands/complete"
	"github.com/arr-dev/arr/commands/embed"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/domain/audit"
	"github.com/arr-dev/arr/domain/routing"
	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/eventstore/postgres"
	"github.com/arr-dev/arr/migrations/migratetest"
)

// admission is what one Admit was asked, and what its settle was told.
type admission struct {
	models  []string
	maxCost float64
	maxToks int64
	settled int
	costUSD float64
	tokens  int64
}

// admitter is the key limits of a test: it records each admission and
// refuses with refuseAs when set. Safe for concurrent use.
type admitter struct {
	mu       sync.Mutex
	refuse   error
	admitted []*admission
}

func (a *admitter) Admit(_ context.Context, _ complete.Caller, models []string, maxCostUSD float64, maxTokens int64) (func(context.Context, float64, int64), error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	ad := &admission{models: models, maxCost: maxCostUSD, maxToks: maxTokens}
	a.admitted = append(a.admitted, ad)
	if a.refuse != nil {
		return nil, a.refuse
	}
	return func(_ context.Context, cost float64, tokens int64) {
		a.mu.Lock()
		defer a.mu.Unlock()
		ad.settled++
		ad.costUSD, ad.tokens = cost, tokens
	}, nil
}

type harness struct {
	h      *embed.Handler
	store  eventstore.Store
	up     *upstreamtest.Server
	key    audit.HashKey
	admit  *admitter
	caller complete.Caller
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	pool, _ := migratetest.NewPool(t)
	st, err := postgres.New(pool, postgres.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	chain, err := commands.NewAuditChain(st, commands.AuditChainConfig{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = chain.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	up := upstreamtest.Start(t)
	cat, err := routing.ParseCatalog(routing.DefaultCatalogJSON())
	if err != nil {
		t.Fatal(err)
	}
	client, err := upstream.New(upstream.Config{Timeout: 2 * time.Second, BreakerFailures: 3, BreakerOpenFor: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	raw := make([]byte, audit.HashKeySize)
	_, _ = rand.Read(raw)
	key, err := audit.NewHashKey(raw)
	if err != nil {
		t.Fatal(err)
	}
	adm := &admitter{}
	h, err := embed.New(embed.Config{Catalog: cat.WithBaseURL(up.URL, "", ""), Upstream: client, Chain: chain, HashKey: key, Admitter: adm})
	if err != nil {
		t.Fatal(err)
	}
	return &harness{h: h, store: st, up: up, key: key, admit: adm,
		caller: complete.Caller{AccountID: uuid.New(), KeyID: uuid.New(), Plan: account.Enterprise}}
}

// request builds the use case's request from a body as a client sends it.
func request(t *testing.T, body map[string]any, inputs ...embed.Input) *embed.Request {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	r := &embed.Request{Body: b, Inputs: inputs}
	if err := json.Unmarshal(b, &r.Fields); err != nil {
		t.Fatal(err)
	}
	r.Model, _ = body["model"].(string)
	r.Base64 = body["encoding_format"] == "base64"
	if d, ok := body["dimensions"].(int); ok {
		r.Dimensions = d
	}
	return r
}

func (hs *harness) embed(t *testing.T, r *embed.Request) (embed.Result, error) {
	t.Helper()
	return hs.h.Handle(context.Background(), embed.Command{Caller: hs.caller, Request: r, RequestID: "req-" + uuid.NewString()})
}

// entries reads the audit chain's payloads.
func (hs *harness) entries(t *testing.T) []audit.Completion {
	t.Helper()
	evs, err := hs.store.ReadStream(context.Background(), audit.StreamID, eventstore.ReadStreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]audit.Completion, len(evs))
	for i, ev := range evs {
		var e audit.CompletionRecorded
		if err := json.Unmarshal(ev.Data, &e); err != nil {
			t.Fatal(err)
		}
		if err := audit.Verify(&e, prevHash(t, evs, i), uint64(i)); err != nil {
			t.Fatalf("entry %d: %v", i, err)
		}
		if out[i], err = e.DecodePayload(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func prevHash(t *testing.T, evs []eventstore.Event, i int) string {
	t.Helper()
	if i == 0 {
		return audit.Genesis
	}
	var e audit.CompletionRecorded
	if err := json.Unmarshal(evs[i-1].Data, &e); err != nil {
		t.Fatal(err)
	}
	return e.Hash
}

type list struct {
	Object string `json:"object"`
	Data   []struct {
		Object    string          `json:"object"`
		Index     int             `json:"index"`
		Embedding json.RawMessage `json:"embedding"`
	} `json:"data"`
	Model string `json:"model"`
	Usage struct {
		PromptTokens int64 `json:"prompt_tokens"`
		TotalTokens  int64 `json:"total_tokens"`
	} `json:"usage"`
}

func decodeList(t *testing.T, body []byte) list {
	t.Helper()
	var l list
	if err := json.Unmarshal(body, &l); err != nil {
		t.Fatalf("reply %s: %v", body, err)
	}
	return l
}

func floats(t *testing.T, raw json.RawMessage) []float32 {
	t.Helper()
	var s string
	if json.Unmarshal(raw, &s) == nil {
		buf, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]float32, len(buf)/4)
		for i := range out {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(buf[4*i:]))
		}
		return out
	}
	var out []float32
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func sameVector(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestEmbedAnswersRecordsAndSettles: a string embeds as float numbers, an
// array as base64 float32s of the same values, dimensions shortens them;
// each request is one verified audit entry (operation embeddings, its
// tokens and cost, the hash of the list as answered), admitted with its
// candidates and the most it can cost (a token per byte of text) and
// settled once with what it cost.
func TestEmbedAnswersRecordsAndSettles(t *testing.T) {
	hs := newHarness(t)
	one, err := hs.embed(t, request(t, map[string]any{"model": "auto", "input": "hello world"}, embed.Input{Text: "hello world"}))
	if err != nil {
		t.Fatal(err)
	}
	l := decodeList(t, one.Body)
	if l.Object != "list" || len(l.Data) != 1 || l.Data[0].Object != "embedding" || l.Model != "text-embedding-3-small" {
		t.Fatalf("reply %s", one.Body)
	}
	if got := floats(t, l.Data[0].Embedding); !sameVector(got, upstreamtest.Vector("text-embedding-3-small", "hello world", 1536)) {
		t.Fatalf("vector of %d numbers is not the upstream's", len(got))
	}
	r := one.Routing
	if r.Tier != "embed-small" || r.Model != "text-embedding-3-small" || r.Vendor != "openai" || r.Dimensions != 1536 || r.Attempts != 1 || !audit.ValidHash(r.AuditHash) {
		t.Fatalf("routing %+v", r)
	}
	// "hello world" is 11 bytes: the loopback upstream counts 11/4+1 = 3 tokens.
	if l.Usage.PromptTokens != 3 || l.Usage.TotalTokens != 3 || r.CostUSD != 0.000001 || r.CostPer1K != 0.00002 {
		t.Fatalf("usage %+v, cost %v per 1k %v", l.Usage, r.CostUSD, r.CostPer1K)
	}

	inputs := []embed.Input{{Text: "first"}, {Text: "second one"}}
	two, err := hs.embed(t, request(t, map[string]any{"model": "embed-small", "input": []any{"first", "second one"}, "encoding_format": "base64", "dimensions": 256}, inputs...))
	if err != nil {
		t.Fatal(err)
	}
	l = decodeList(t, two.Body)
	if len(l.Data) != 2 || l.Data[1].Index != 1 || two.Routing.Dimensions != 256 {
		t.Fatalf("reply %s", two.Body)
	}
	if !sameVector(floats(t, l.Data[0].Embedding), upstreamtest.Vector("text-embedding-3-small", "first", 256)) ||
		!sameVector(floats(t, l.Data[1].Embedding), upstreamtest.Vector("text-embedding-3-small", "second one", 256)) {
		t.Fatal("base64 vectors are not the upstream's")
	}
	sent := hs.up.LastRequest("text-embedding-3-small")
	if sent["encoding_format"] != "float" || sent["dimensions"] != float64(256) {
		t.Fatalf("upstream request %v", sent)
	}

	// A model whose length cannot be chosen is not sent dimensions, even
	// its own.
	three, err := hs.embed(t, request(t, map[string]any{"model": "mistral-embed", "input": "third", "dimensions": 1024}, embed.Input{Text: "third"}))
	if err != nil || three.Routing.Dimensions != 1024 {
		t.Fatalf("mistral-embed at its own length: %+v %v", three.Routing, err)
	}
	if sent := hs.up.LastRequest("mistral-embed"); sent["dimensions"] != nil {
		t.Fatalf("mistral-embed was sent dimensions: %v", sent)
	}

	es := hs.entries(t)
	if len(es) != 3 {
		t.Fatalf("%d audit entries", len(es))
	}
	for i, res := range []embed.Result{one, two} {
		e := es[i]
		if e.Operation != audit.OperationEmbeddings || e.Tier != "embed-small" || e.Model != "text-embedding-3-small" || e.CompletionTokens != 0 ||
			e.PromptTokens != res.Usage.Prompt || e.CostMicroUSD != int64(math.Round(res.Routing.CostUSD*1e6)) || e.ResponseHash != hs.key.Sum(res.Body) || e.Outcome != "ok" {
			t.Fatalf("entry %d: %+v (result %+v)", i, e, res.Routing)
		}
	}
	if len(hs.admit.admitted) != 3 {
		t.Fatalf("%d admissions", len(hs.admit.admitted))
	}
	a := hs.admit.admitted[1]
	if strings.Join(a.models, ",") != "text-embedding-3-small" || a.maxToks != 15 || a.maxCost <= 0 || a.settled != 1 || a.tokens != two.Usage.Prompt || a.costUSD != two.Routing.CostUSD {
		t.Fatalf("admission %+v", a)
	}
}

// TestEmbedFailsOverWithinTheTier: a model that fails, or answers with
// vectors of the wrong length, is passed over for the tier's next; a
// named model has no other; the upstream's own 4xx is passed on.
func TestEmbedFailsOverWithinTheTier(t *testing.T) {
	hs := newHarness(t)
	hs.up.Set("text-embedding-3-small", upstreamtest.Behavior{Status: http.StatusInternalServerError})
	res, err := hs.embed(t, request(t, map[string]any{"input": "x"}, embed.Input{Text: "x"}))
	if err != nil || res.Routing.Model != "mistral-embed" || res.Routing.Attempts != 2 || res.Routing.Dimensions != 1024 {
		t.Fatalf("failover: %+v %v", res.Routing, err)
	}
	hs.up.Set("text-embedding-3-small", upstreamtest.Behavior{Dimensions: 10})
	res, err = hs.embed(t, request(t, map[string]any{"input": "y"}, embed.Input{Text: "y"}))
	if err != nil || res.Routing.Model != "mistral-embed" || res.Routing.Attempts != 2 {
		t.Fatalf("wrong length: %+v %v", res.Routing, err)
	}
	_, err = hs.embed(t, request(t, map[string]any{"model": "text-embedding-3-small", "input": "z"}, embed.Input{Text: "z"}))
	var uf *complete.UpstreamFailure
	if !errors.As(err, &uf) || len(uf.Attempts) != 1 {
		t.Fatalf("a named model that fails: %v", err)
	}
	hs.up.Set("mistral-embed", upstreamtest.Behavior{Status: http.StatusBadRequest})
	_, err = hs.embed(t, request(t, map[string]any{"model": "mistral-embed", "input": "z"}, embed.Input{Text: "z"}))
	var refused *complete.Refused
	if !errors.As(err, &refused) || refused.Status != http.StatusBadRequest || !json.Valid(refused.Body) {
		t.Fatalf("the upstream's 400: %v", err)
	}
	for _, a := range hs.admit.admitted[2:] {
		if a.settled != 1 || a.costUSD != 0 || a.tokens != 0 {
			t.Fatalf("a failed request settled %+v", a)
		}
	}
	if n := len(hs.entries(t)); n != 2 {
		t.Fatalf("%d audit entries, want the 2 answered", n)
	}
}

// TestEmbedRefusedByTheAdmitter: a request the key's limits refuse never
// reaches an upstream and records nothing.
func TestEmbedRefusedByTheAdmitter(t *testing.T) {
	hs := newHarness(t)
	hs.admit.refuse = domain.RateLimited("budget_exceeded", "the key's budget is spent")
	_, err := hs.embed(t, request(t, map[string]any{"input": "x"}, embed.Input{Text: "x"}))
	if !errors.Is(err, domain.ErrRateLimited) {
		t.Fatalf("refused: %v", err)
	}
	if hs.up.Calls("text-embedding-3-small")+hs.up.Calls("mistral-embed") != 0 || len(hs.entries(t)) != 0 {
		t.Fatal("a refused request reached an upstream or the chain")
	}
	if a := hs.admit.admitted[0]; strings.Join(a.models, ",") != "text-embedding-3-small,mistral-embed" {
		t.Fatalf("admission asked for %v", a.models)
	}
}

// TestEmbedChoosesAmongTheKeysModels: auto routes only over the models a
// key may use; a model it may not use is 403 model_not_allowed before
// any admission or upstream call.
func TestEmbedChoosesAmongTheKeysModels(t *testing.T) {
	hs := newHarness(t)
	onlyMistral := func(id, _ string) bool { return id == "mistral-embed" }
	res, err := hs.h.Handle(context.Background(), embed.Command{Caller: hs.caller, Allow: onlyMistral,
		Request: request(t, map[string]any{"input": "x"}, embed.Input{Text: "x"})})
	if err != nil || res.Routing.Model != "mistral-embed" || res.Routing.Attempts != 1 {
		t.Fatalf("auto among the allowed: %+v %v", res.Routing, err)
	}
	_, err = hs.h.Handle(context.Background(), embed.Command{Caller: hs.caller, Allow: onlyMistral,
		Request: request(t, map[string]any{"model": "embed-large", "input": "x"}, embed.Input{Text: "x"})})
	var de *domain.Error
	if !errors.As(err, &de) || de.Code != "model_not_allowed" || !errors.Is(err, domain.ErrForbidden) {
		t.Fatalf("a tier the key may not use: %v", err)
	}
	if len(hs.admit.admitted) != 1 || hs.up.Calls("text-embedding-3-large") != 0 {
		t.Fatalf("a refused model was admitted (%d) or called", len(hs.admit.admitted))
	}
}
