package embed

import (
	"context"
	"math"
	"time"

	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/commands/complete"
	"github.com/arr-dev/arr/domain/audit"
	"github.com/arr-dev/arr/domain/routing"
)

// record appends the request to the audit chain, as a completion whose
// operation is embeddings, and waits for its fate even if the client has
// gone (at most RecordTimeout while the entry is queued).
func (h *Handler) record(ctx context.Context, k *call, a *answer, u complete.Usage, cost routing.MicroUSD, respHash string) (commands.Recorded, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), h.cfg.RecordTimeout)
	defer cancel()
	m := a.model
	return h.cfg.Chain.Record(ctx, commands.RecordCompletion{Metadata: k.md, Completion: audit.Completion{
		AccountID: k.caller.AccountID, KeyID: k.caller.KeyID, RequestID: k.md.RequestID,
		RequestHash: h.cfg.HashKey.Sum(k.req.Body), ResponseHash: respHash,
		Tier: m.Tier, Model: m.ID, Vendor: m.Vendor,
		PromptTokens: u.Prompt, UsageEstimated: u.Estimated, CostMicroUSD: cost,
		Outcome: "ok", Attempts: a.attempts, UpstreamMS: ms(a.upstreamTime),
		TotalMS: ms(h.cfg.Clock().Sub(k.start)), StartedAt: k.start.UTC(), Operation: audit.OperationEmbeddings,
	}})
}

func ms(d time.Duration) float64 { return math.Round(float64(d.Microseconds())) / 1000 }

func seconds(d time.Duration) float64 { return math.Round(d.Seconds()*1e6) / 1e6 }
