package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/arr-dev/arr/adapters/upstream"
	"github.com/arr-dev/arr/adapters/webhook"
	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/commands/complete"
	"github.com/arr-dev/arr/commands/embed"
	"github.com/arr-dev/arr/commands/spend"
	"github.com/arr-dev/arr/domain/guardrail"
	"github.com/arr-dev/arr/domain/routing"
	"github.com/arr-dev/arr/readapi/app"
)

// upstreamKeyEnv is the API-key variable of every model when
// ARR_UPSTREAM_BASE_URL serves them all.
const upstreamKeyEnv = "ARR_UPSTREAM_API_KEY"

// loadCatalog reads ARR_CATALOG (or the shipped catalog) and applies
// ARR_MODEL_ALIASES, ARR_UPSTREAM_BASE_URL and ARR_UPSTREAM_MODEL.
func loadCatalog(cfg Config) (*routing.Catalog, error) {
	data := routing.DefaultCatalogJSON()
	if cfg.Catalog != "" {
		b, err := os.ReadFile(cfg.Catalog)
		if err != nil {
			return nil, fmt.Errorf("ARR_CATALOG: %w", err)
		}
		data = b
	}
	cat, err := routing.ParseCatalog(data)
	if err != nil {
		return nil, fmt.Errorf("ARR_CATALOG %s: %w", cfg.Catalog, err)
	}
	if cfg.ModelAliases != "" {
		extra, err := routing.ParseAliases(cfg.ModelAliases)
		if err != nil {
			return nil, fmt.Errorf("ARR_MODEL_ALIASES: %w", err)
		}
		if cat, err = cat.WithAliases(extra); err != nil {
			return nil, fmt.Errorf("ARR_MODEL_ALIASES: %w", err)
		}
	}
	if cfg.UpstreamBaseURL != "" {
		cat = cat.WithBaseURL(cfg.UpstreamBaseURL, upstreamKeyEnv, cfg.UpstreamModel)
	}
	return cat, nil
}

// openCompletions builds the gateway's completion and embeddings use
// cases over one catalog, one upstream client (one breaker per model) and
// the audit chain, whose sequencer the lifecycle runs.
func (s *system) openCompletions(a app.Application) (*complete.Handler, *embed.Handler, *commands.AuditChain, error) {
	cfg, log := s.cfg, s.log
	cat, err := loadCatalog(cfg)
	if err != nil {
		return nil, nil, nil, err
	}
	s.chatUpstreams = len(cat.Models())
	if cfg.UpstreamBaseURL == "" {
		s.chatUpstreams = warnUnsetKeys(cat, log)
	}
	up, err := upstream.New(upstream.Config{
		Timeout: cfg.UpstreamTimeout, StreamIdleTimeout: cfg.UpstreamTimeout,
		BreakerFailures: uint32(cfg.BreakerFailures), BreakerOpenFor: cfg.BreakerOpen, Logger: log,
		APIKey: func(env string) string {
			if env == upstreamKeyEnv {
				return cfg.UpstreamAPIKey
			}
			return os.Getenv(env)
		},
		// The single upstream (vLLM, Ollama, …) may need no key; a
		// vendor's API always does.
		KeyRequired: func(env string) bool { return env != upstreamKeyEnv },
		Tracer:      s.traces.Tracer(),
	})
	if err != nil {
		return nil, nil, nil, err
	}
	chain, err := commands.NewAuditChain(s.store, commands.AuditChainConfig{Logger: log})
	if err != nil {
		return nil, nil, nil, err
	}
	hashKey := s.auditKey // bound at start (openOptions.auditKey)
	if !hashKey.Valid() {
		return nil, nil, nil, errors.New("gateway: the audit hash key was not loaded")
	}
	entries := cfg.CacheEntries
	if entries == 0 {
		entries = -1 // off
	}
	guard, err := spend.New(spend.Config{Pool: s.pool, Store: s.store, Mailer: a.Mailer, Clock: s.now, Logger: log,
		TierOf: cat.TierOf})
	if err != nil {
		return nil, nil, nil, err
	}
	s.guard = guard
	comp, err := complete.New(complete.Config{
		Catalog: cat, Upstream: up, Chain: chain, HashKey: hashKey,
		Quality: a.Queries.TierQuality, Cache: complete.CacheConfig{MaxEntries: entries, TTL: cfg.CacheTTL},
		Registerer: s.registry, Logger: log, Tracer: s.traces.Tracer(), Limits: guard, MaxDuration: cfg.MaxRequestDuration,
		// Webhook guardrails go through the webhooks' sender: its SSRF
		// guard (ARR_WEBHOOK_PRIVATE=allow lets loopback through, for
		// tests), its signing; each call bounded by its policy's timeout.
		Guardrails: complete.GuardrailConfig{Webhook: webhook.New(webhook.Config{AllowPrivate: s.cfg.WebhookPrivate == "allow",
			Timeout: guardrail.MaxWebhookTimeoutMS * time.Millisecond, UserAgent: "arr-guardrails"})},
	})
	if err != nil {
		return nil, nil, nil, err
	}
	emb, err := embed.New(embed.Config{Catalog: cat, Upstream: up, Chain: chain, HashKey: hashKey, Registerer: s.registry, Logger: log,
		Admitter: guard})
	if err != nil {
		return nil, nil, nil, err
	}
	return comp, emb, chain, nil
}

// warnUnsetKeys logs the API-key variables of catalog models (of both
// kinds) that are unset: those models are skipped. It returns how many
// chat models have their key.
func warnUnsetKeys(cat *routing.Catalog, log *slog.Logger) int {
	var missing []string
	add := func(env string) {
		if env != "" && os.Getenv(env) == "" && !slices.Contains(missing, env) {
			missing = append(missing, env)
		}
	}
	configured := 0
	for _, m := range cat.Models() {
		add(m.APIKeyEnv)
		if m.APIKeyEnv == "" || os.Getenv(m.APIKeyEnv) != "" {
			configured++
		}
	}
	for _, m := range cat.EmbeddingModels() {
		add(m.APIKeyEnv)
	}
	if len(missing) > 0 {
		log.Warn("gateway: catalog models whose API-key variable is unset are skipped (a request no configured model can answer is 502); set them, or ARR_UPSTREAM_BASE_URL for one OpenAI-compatible server", "unset", strings.Join(missing, ","))
	}
	return configured
}
