package gateway

import (
	"context"

	"github.com/arr-dev/arr/commands/complete"
	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/readapi/billingapi"
)

// HealthReport is the gateway's /healthz body: the shared report with the
// payment provider, plus the routing: tiers, the response cache, the
// upstreams' breakers and the audit chain.
type HealthReport struct {
	billingapi.HealthReport
	Routing RoutingHealth `json:"routing"`
}

// RoutingHealth is the routing part of /healthz.
type RoutingHealth struct {
	Status string         `json:"status"` // "ok": a gateway without routing does not start
	Tiers  map[string]int `json:"tiers"`  // models per tier
	// TierCount and ModelCount count the catalog.
	TierCount  int                 `json:"tier_count"`
	ModelCount int                 `json:"model_count"`
	Cache      complete.CacheStats `json:"cache"`
	Breakers   map[string]string   `json:"breakers"`
	Audit      AuditHealth         `json:"audit"`
}

// AuditHealth is the audit chain as its read model sees it.
type AuditHealth struct {
	Entries  int64  `json:"entries"`
	HeadHash string `json:"head_hash,omitempty"`
	Error    string `json:"error,omitempty"`
}

func (s *completer) health(ctx context.Context) (int, any) {
	code, base := billingapi.Health(ctx, s.d, string(account.Gateway))
	bh, ok := base.(billingapi.HealthReport)
	if !ok {
		return code, base
	}
	comp := s.app.Completions
	r := HealthReport{HealthReport: bh, Routing: RoutingHealth{Status: "ok", Tiers: map[string]int{}, Cache: comp.CacheStats()}}
	cat := comp.Catalog()
	for _, t := range cat.Tiers {
		r.Routing.Tiers[t.Name] = len(t.Models)
		r.Routing.ModelCount += len(t.Models)
	}
	r.Routing.TierCount = len(cat.Tiers)
	r.Routing.Breakers = comp.BreakerStates()
	n, head, err := s.app.Queries.Audit.Stats(ctx)
	r.Routing.Audit = AuditHealth{Entries: n, HeadHash: head}
	if err != nil {
		r.Routing.Audit.Error = "the audit read model does not answer"
	}
	return code, r
}
