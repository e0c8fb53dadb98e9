package main

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/arr-dev/arr/adapters/upstream"
	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/commands/complete"
	"github.com/arr-dev/arr/commands/spend"
	"github.com/arr-dev/arr/domain/routing"
	"github.com/arr-dev/arr/readapi/app"
)

// upstreamKeyEnv is the API-key variable of every model when
// ARR_UPSTREAM_BASE_URL serves them all.
const upstreamKeyEnv = "ARR_UPSTREAM_API_KEY"

// loadCatalog reads ARR_CATALOG (or the shipped catalog) and applies
// ARR_UPSTREAM_BASE_URL.
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
	if cfg.UpstreamBaseURL != "" {
		cat = cat.WithBaseURL(cfg.UpstreamBaseURL, upstreamKeyEnv)
	}
	return cat, nil
}

// openCompletions builds the gateway's completion use case: the catalog,
// the upstream client, the cache and the audit chain, whose sequencer the
// lifecycle runs.
func (s *system) openCompletions(a app.Application) (*complete.Handler, *commands.AuditChain, error) {
	cfg, log := s.cfg, s.log
	cat, err := loadCatalog(cfg)
	if err != nil {
		return nil, nil, err
	}
	if cfg.UpstreamBaseURL == "" {
		var missing []string
		for _, t := range cat.Tiers {
			for _, m := range t.Models {
				if m.APIKeyEnv != "" && os.Getenv(m.APIKeyEnv) == "" && !slices.Contains(missing, m.APIKeyEnv) {
					missing = append(missing, m.APIKeyEnv)
				}
			}
		}
		if len(missing) > 0 {
			log.Warn("gateway: catalog models whose API-key variable is unset are skipped (a completion no configured model can answer is 502); set them, or ARR_UPSTREAM_BASE_URL for one OpenAI-compatible server", "unset", strings.Join(missing, ","))
		}
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
	})
	if err != nil {
		return nil, nil, err
	}
	chain, err := commands.NewAuditChain(s.store, commands.AuditChainConfig{Logger: log})
	if err != nil {
		return nil, nil, err
	}
	hashKey := s.auditKey // bound at start (openOptions.auditKey)
	if !hashKey.Valid() {
		return nil, nil, errors.New("gateway: the audit hash key was not loaded")
	}
	entries := cfg.CacheEntries
	if entries == 0 {
		entries = -1 // off
	}
	guard, err := spend.New(spend.Config{Pool: s.pool, Store: s.store, Mailer: a.Mailer, Clock: s.now, Logger: log,
		TierOf: func(id string) string { m, _ := cat.Model(id); return m.Tier }})
	if err != nil {
		return nil, nil, err
	}
	s.guard = guard
	comp, err := complete.New(complete.Config{
		Catalog: cat, Upstream: up, Chain: chain, HashKey: hashKey,
		Quality: a.Queries.TierQuality, Cache: complete.CacheConfig{MaxEntries: entries, TTL: cfg.CacheTTL},
		Registerer: s.registry, Logger: log, Limits: guard,
	})
	if err != nil {
		return nil, nil, err
	}
	return comp, chain, nil
}
