package complete_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/adapters/upstream"
	"github.com/arr-dev/arr/adapters/upstream/upstreamtest"
	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/commands/complete"
	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/domain/audit"
	"github.com/arr-dev/arr/domain/routing"
	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/eventstore/postgres"
	"github.com/arr-dev/arr/migrations/migratetest"
)

// clock is a fake clock the test moves by hand. Safe for concurrent use.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// harness is a completion handler over a real PostgreSQL event store, a
// running audit chain and a loopback upstream serving every catalog model.
type harness struct {
	h      *complete.Handler
	store  eventstore.Store
	chain  *commands.AuditChain
	up     *upstreamtest.Server
	key    audit.HashKey
	clock  *clock
	caller complete.Caller
}

// options adjust a harness before it starts.
type options struct {
	store      postgres.Config
	chain      commands.AuditChainConfig
	complete   func(*complete.Config)
	startChain bool
}

func newHarness(t *testing.T, o options) *harness {
	t.Helper()
	pool, _ := migratetest.NewPool(t)
	st, err := postgres.New(pool, o.store)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	chain, err := commands.NewAuditChain(st, o.chain)
	if err != nil {
		t.Fatal(err)
	}
	up := upstreamtest.Start(t)
	cat, err := routing.ParseCatalog(routing.DefaultCatalogJSON())
	if err != nil {
		t.Fatal(err)
	}
	client, err := upstream.New(upstream.Config{Timeout: 2 * time.Second, StreamIdleTimeout: 2 * time.Second, BreakerFailures: 3, BreakerOpenFor: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	raw := make([]byte, audit.HashKeySize)
	_, _ = rand.Read(raw)
	key, err := audit.NewHashKey(raw)
	if err != nil {
		t.Fatal(err)
	}
	clk := &clock{now: time.Date(2026, 11, 22, 9, 30, 0, 0, time.UTC)}
	cfg := complete.Config{Catalog: cat.WithBaseURL(up.URL, "", ""), Upstream: client, Chain: chain, HashKey: key, Clock: clk.Now,
		Cache: complete.CacheConfig{MaxEntries: 100, TTL: time.Hour}}
	if o.complete != nil {
		o.complete(&cfg)
	}
	h, err := complete.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := &harness{h: h, store: st, chain: chain, up: up, key: key, clock: clk,
		caller: complete.Caller{AccountID: uuid.New(), KeyID: uuid.New(), Plan: account.Enterprise}}
	if o.startChain {
		hs.runChain(t)
	}
	return hs
}

// runChain runs the audit chain until the test ends.
func (hs *harness) runChain(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = hs.chain.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

// request is the chat request of one user message; fields are added to
// (or replace) the request's top-level fields.
func request(t *testing.T, text string, fields map[string]any) *complete.Request {
	t.Helper()
	all := map[string]any{"model": "auto", "messages": []any{map[string]any{"role": "user", "content": text}}}
	for k, v := range fields {
		all[k] = v
	}
	body, err := json.Marshal(all)
	if err != nil {
		t.Fatal(err)
	}
	r := &complete.Request{Fields: map[string]json.RawMessage{}, Body: body, Model: "auto", QualityFloor: routing.DefaultQualityFloor,
		Messages: []routing.Message{{Role: "user", Text: text}}}
	if err := json.Unmarshal(body, &r.Fields); err != nil {
		t.Fatal(err)
	}
	var f struct {
		Model       string   `json:"model"`
		Stream      bool     `json:"stream"`
		Temperature *float64 `json:"temperature"`
		MaxCostUSD  float64  `json:"max_cost_usd"`
	}
	if err := json.Unmarshal(body, &f); err != nil {
		t.Fatal(err)
	}
	r.Model, r.Stream, r.Temperature, r.MaxCostMicro = f.Model, f.Stream, f.Temperature, int64(f.MaxCostUSD*1e6)
	return r
}

// complete runs one completion.
func (hs *harness) complete(t *testing.T, r *complete.Request, mode complete.CacheMode) (complete.Result, error) {
	t.Helper()
	return hs.h.Handle(context.Background(), complete.Command{Caller: hs.caller, Request: r, Cache: mode, RequestID: "req-" + uuid.NewString()})
}

// entry is one audit entry as the log holds it.
type entry struct {
	audit.CompletionRecorded
	Completion audit.Completion
	Position   uint64
}

// entries reads the whole audit chain from the store.
func (hs *harness) entries(t *testing.T) []entry {
	t.Helper()
	evs, err := hs.store.ReadStream(context.Background(), audit.StreamID, eventstore.ReadStreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]entry, len(evs))
	for i, ev := range evs {
		if err := json.Unmarshal(ev.Data, &out[i].CompletionRecorded); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(out[i].Payload, &out[i].Completion); err != nil {
			t.Fatal(err)
		}
		out[i].Position = ev.Position
	}
	return out
}

// drain reads a stream to its end and returns the chunks and the final
// error (io.EOF when it ended and was recorded).
func drain(t *testing.T, st *complete.Stream) ([]map[string]any, error) {
	t.Helper()
	defer st.Close()
	var chunks []map[string]any
	for i := 0; i < 10000; i++ {
		data, err := st.Next()
		if err != nil {
			return chunks, err
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatalf("chunk %q is not JSON: %v", data, err)
		}
		chunks = append(chunks, m)
	}
	t.Fatal("the stream did not end")
	return nil, nil
}
