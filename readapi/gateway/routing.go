package gateway

import (
	"github.com/arr-dev/arr/commands/complete"
	"github.com/arr-dev/arr/readapi/app"
)

// Routing is what the completion routes need beyond httpx.Deps. The zero
// value serves every route but answers completions, models, audit,
// feedback and usage with 503 (routing not configured).
type Routing struct {
	// Complete runs completions: routing, failover, cache, usage and the
	// audit record.
	Complete *complete.Handler
	Audit    app.Audit
	Usage    app.GatewayUsage
	// AuditorKey, sent in X-Auditor-Key, reads the payload of every audit
	// entry; empty turns it off. A secret: never logged.
	AuditorKey string
	// Log serves the signed event log's heads and proofs (/v1/log); nil
	// (the KurrentDB event store) answers 503. It needs none of the rest.
	Log LogProofs
}

func (r Routing) configured() bool {
	return r.Complete != nil && r.Audit != nil && r.Usage != nil
}
