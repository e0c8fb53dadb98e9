package gateway

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/domain/routing"
)

func round6(f float64) float64 { return float64(int64(f*1e9+0.5)) / 1e9 }

// models answers GET /v1/models (public): "auto", each tier and each
// model, then each embedding tier and embedding model, in the OpenAI list
// shape with the gateway's fields added.
func (s *completer) models(c *gin.Context) error {
	cat := s.app.Completions.Catalog()
	var tierNames []string
	data := []gin.H{}
	for _, t := range cat.Tiers {
		tierNames = append(tierNames, t.Name)
	}
	data = append(data, gin.H{"id": "auto", "object": "model", "created": 0, "owned_by": "arr", "kind": "router",
		"default_quality_floor": routing.DefaultQualityFloor, "tiers": tierNames,
		"description": "picks the cheapest tier whose predicted quality clears quality_floor and whose estimated cost is within max_cost_usd"})
	for _, t := range cat.Tiers {
		var ids []string
		lo, hi := t.Models[0].CostPer1KUSD(), t.Models[0].CostPer1KUSD()
		for _, m := range t.Models {
			ids = append(ids, m.ID)
			lo, hi = min(lo, m.CostPer1KUSD()), max(hi, m.CostPer1KUSD())
		}
		data = append(data, gin.H{"id": t.Name, "object": "model", "created": 0, "owned_by": "arr", "kind": "tier", "tier": t.Name,
			"quality": t.Quality, "default_quality_floor": routing.DefaultQualityFloor, "context_window": t.ContextWindow,
			"cost_per_1k": round6(t.Models[0].CostPer1KUSD()), "cost_per_1k_range": []float64{round6(lo), round6(hi)},
			"input_cost_per_1k": round6(t.Models[0].InputPer1KUSD()), "output_cost_per_1k": round6(t.Models[0].OutputPer1KUSD()),
			"cached_input_cost_per_1k": round6(t.Models[0].CachedInputPer1KUSD()), "cache_write_cost_per_1k": round6(t.Models[0].CacheWritePer1KUSD()),
			"models": ids})
	}
	for _, m := range cat.Models() {
		data = append(data, gin.H{"id": m.ID, "object": "model", "created": 0, "owned_by": m.Vendor, "kind": "model", "tier": m.Tier,
			"vendor": m.Vendor, "api": m.API, "quality": m.Quality, "context_window": m.ContextWindow, "cost_per_1k": round6(m.CostPer1KUSD()),
			"input_cost_per_1k": round6(m.InputPer1KUSD()), "output_cost_per_1k": round6(m.OutputPer1KUSD()),
			"cached_input_cost_per_1k": round6(m.CachedInputPer1KUSD()), "cache_write_cost_per_1k": round6(m.CacheWritePer1KUSD())})
	}
	data = append(data, embeddingModels(cat)...)
	c.Header("Cache-Control", "public, max-age=60")
	c.JSON(http.StatusOK, gin.H{"object": "list", "data": data})
	return nil
}

// embeddingModels are the /v1/models entries of the embedding tiers and
// models (POST /v1/embeddings): kind embedding_tier or embedding_model,
// priced per 1k input tokens, with their vector lengths.
func embeddingModels(cat *routing.Catalog) []gin.H {
	var out []gin.H
	for _, t := range cat.EmbeddingTiers {
		var ids []string
		for _, m := range t.Models {
			ids = append(ids, m.ID)
		}
		first := t.Models[0]
		out = append(out, gin.H{"id": t.Name, "object": "model", "created": 0, "owned_by": "arr", "kind": "embedding_tier", "tier": t.Name,
			"input_cost_per_1k": round6(first.InputPer1KUSD()), "dimensions": first.Dimensions, "models": ids})
	}
	for _, m := range cat.EmbeddingModels() {
		e := gin.H{"id": m.ID, "object": "model", "created": 0, "owned_by": m.Vendor, "kind": "embedding_model", "tier": m.Tier,
			"vendor": m.Vendor, "input_cost_per_1k": round6(m.InputPer1KUSD()), "dimensions": m.Dimensions, "max_input_tokens": m.ContextWindow}
		if m.MinDimensions > 0 {
			e["min_dimensions"] = m.MinDimensions
		}
		out = append(out, e)
	}
	return out
}
