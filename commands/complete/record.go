package complete

import (
	"context"
	"math"
	"time"

	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/domain/audit"
	"github.com/arr-dev/arr/domain/routing"
)

// record appends the completion to the audit chain and waits for its
// fate, even if the client has gone: while the entry is queued, at most
// RecordTimeout (then it is withdrawn and never recorded); once it is
// sent to the store, until the store's answer. Its request hash, like
// respHash, is keyed (Config.HashKey), so it cannot confirm a guessed body.
func (h *Handler) record(ctx context.Context, k *call, m routing.Model, u Usage, respHash string, cacheHit bool, outcome string, attempts int, upstreamTime time.Duration) (commands.Recorded, int64, error) {
	cost := int64(0)
	if !cacheHit {
		cost = m.Cost(u.Tokens())
		k.spend.spent(cost, u.Prompt+u.Completion)
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), h.cfg.RecordTimeout)
	defer cancel()
	rec, err := h.recordTraced(ctx, commands.RecordCompletion{Metadata: k.md, Completion: audit.Completion{
		AccountID: k.caller.AccountID, KeyID: k.caller.KeyID, RequestID: k.md.RequestID, RequestHash: h.cfg.HashKey.Sum(k.req.Body), ResponseHash: respHash,
		Tier: m.Tier, Model: m.ID, Vendor: m.Vendor, Difficulty: k.dec.Difficulty, Stream: k.req.Stream,
		PromptTokens: u.Prompt, CompletionTokens: u.Completion, CacheReadTokens: u.CacheRead, CacheWriteTokens: u.CacheWrite,
		UsageEstimated: u.Estimated, CostMicroUSD: cost,
		CacheHit: cacheHit, Outcome: outcome, Attempts: attempts, UpstreamMS: ms(upstreamTime),
		TotalMS: ms(h.cfg.Clock().Sub(k.start)), StartedAt: k.start.UTC(), Guardrails: k.auditFired(),
	}})
	if err != nil {
		return commands.Recorded{}, 0, err
	}
	h.m.completed(m.Tier, m.ID, outcome, cacheHit, u, cost)
	return rec, cost, nil
}

func ms(d time.Duration) float64 { return math.Round(float64(d.Microseconds())) / 1000 }

// routing is the routing object of the completion of usage u.
func (h *Handler) routing(k *call, m routing.Model, rec commands.Recorded, u Usage, cost int64, cacheHit bool, attempts int, pred float64) Routing {
	return Routing{
		Tier: m.Tier, Model: m.ID, Vendor: m.Vendor, DifficultyScore: k.dec.Difficulty, AuditHash: rec.Hash,
		CostPer1K: m.CostPer1KUSD(), CostUSD: float64(cost) / 1e6, CacheHit: cacheHit,
		CacheReadTokens: u.CacheRead, CacheWriteTokens: u.CacheWrite,
		ElapsedSec: math.Round(h.cfg.Clock().Sub(k.start).Seconds()*1e6) / 1e6, Attempts: attempts,
		PredictedQuality: math.Round(pred*1000) / 1000, AuditPosition: rec.Position,
	}
}
