// Package completetest builds the gateway's use cases for the tests of the
// servers that serve them: the shipped catalog with every model pointed at
// one OpenAI-compatible base URL (a loopback server the test started), a
// random audit hash key, and one audit chain over the test's store, run
// until the test ends, shared by completions and embeddings as in the
// composition root.
package completetest

import (
	"context"
	"crypto/rand"
	"testing"

	"github.com/arr-dev/arr/adapters/upstream"
	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/commands/complete"
	"github.com/arr-dev/arr/commands/embed"
	"github.com/arr-dev/arr/domain/audit"
	"github.com/arr-dev/arr/domain/routing"
)

// Gateway is the gateway's part of an application.
type Gateway struct {
	Completions *complete.Handler
	Embeddings  *embed.Handler
}

// New returns the completion and embeddings handlers whose models are all
// served at baseURL, appending their audit entries to store; quality is
// the tier-quality read model (nil: none). Neither has key limits.
func New(t testing.TB, store commands.Appender, baseURL string, quality complete.FeedbackSource) Gateway {
	t.Helper()
	cat, err := routing.ParseCatalog(routing.DefaultCatalogJSON())
	if err != nil {
		t.Fatal(err)
	}
	cat = cat.WithBaseURL(baseURL, "ARR_UPSTREAM_API_KEY", "")
	up, err := upstream.New(upstream.Config{APIKey: func(string) string { return "" }, KeyRequired: func(string) bool { return false }})
	if err != nil {
		t.Fatal(err)
	}
	chain, err := commands.NewAuditChain(store, commands.AuditChainConfig{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = chain.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	raw := make([]byte, 32)
	_, _ = rand.Read(raw)
	key, err := audit.NewHashKey(raw)
	if err != nil {
		t.Fatal(err)
	}
	var g Gateway
	if g.Completions, err = complete.New(complete.Config{Catalog: cat, Upstream: up, Chain: chain, HashKey: key, Quality: quality}); err != nil {
		t.Fatal(err)
	}
	if g.Embeddings, err = embed.New(embed.Config{Catalog: cat, Upstream: up, Chain: chain, HashKey: key}); err != nil {
		t.Fatal(err)
	}
	return g
}
