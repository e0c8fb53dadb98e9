package gateway

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/arr-dev/arr/adapters/upstream"
	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/domain/audit"
	"github.com/arr-dev/arr/domain/routing"
	"github.com/arr-dev/arr/projections"
)

// Recorder appends completions to the audit chain; *commands.AuditChain is
// one.
type Recorder interface {
	Record(ctx context.Context, c commands.RecordCompletion) (commands.Recorded, error)
}

// Routing is what the completion routes need beyond httpx.Deps. The zero
// value serves every route but answers completions, models, audit,
// feedback and usage with 503 (routing not configured).
type Routing struct {
	Catalog  *routing.Catalog
	Upstream *upstream.Client
	Chain    Recorder
	Audit    *projections.AuditEntries
	Usage    *projections.GatewayUsageReports
	Quality  FeedbackSource
	Cache    CacheConfig
	// QualityRefresh is how often the router re-reads the tier-quality
	// read model. Default 1s.
	QualityRefresh time.Duration
	// RecordTimeout bounds the wait for a completion's audit entry to
	// commit. Default 15s.
	RecordTimeout time.Duration
	// Registerer receives the routing series (completions, upstream
	// latency, failovers, cost, tokens); nil registers nothing.
	Registerer prometheus.Registerer
	// HashKey keys the request_hash and response_hash of audit entries
	// (HMAC-SHA-256). Required with the rest of Routing.
	HashKey audit.HashKey
	// AuditorKey, sent in X-Auditor-Key, reads the payload of every audit
	// entry; empty turns it off. A secret: never logged.
	AuditorKey string
	// Log serves the signed event log's heads and proofs (/v1/log); nil
	// (the KurrentDB event store) answers 503. It needs none of the rest.
	Log LogProofs
}

func (r Routing) configured() bool {
	return r.Catalog != nil && r.Upstream != nil && r.Chain != nil && r.Audit != nil && r.Usage != nil
}
