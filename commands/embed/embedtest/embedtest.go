// Package embedtest builds an embeddings use case for the tests of the
// servers that serve it: the shipped catalog with every model pointed at
// one OpenAI-compatible base URL (a loopback server the test started), a
// random audit hash key, and an audit chain over the test's store, run
// until the test ends.
package embedtest

import (
	"context"
	"crypto/rand"
	"testing"

	"github.com/arr-dev/arr/adapters/upstream"
	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/commands/embed"
	"github.com/arr-dev/arr/domain/audit"
	"github.com/arr-dev/arr/domain/routing"
)

// New returns an embeddings handler whose models are all served at
// baseURL, appending its audit entries to store, with admit as its
// Admitter (nil: no key limits).
func New(t testing.TB, store commands.Appender, baseURL string, admit embed.Admitter) *embed.Handler {
	t.Helper()
	cat, err := routing.ParseCatalog(routing.DefaultCatalogJSON())
	if err != nil {
		t.Fatal(err)
	}
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
	h, err := embed.New(embed.Config{Catalog: cat.WithBaseURL(baseURL, "ARR_UPSTREAM_API_KEY"), Upstream: up, Chain: chain, HashKey: key, Admitter: admit})
	if err != nil {
		t.Fatal(err)
	}
	return h
}
