package gateway

import (
	"time"

	"github.com/arr-dev/arr/readapi/app"
)

// Options are the gateway's settings beyond the shared Deps: values, not
// components (those are the application's).
type Options struct {
	// AuditorKey, sent in X-Auditor-Key, reads the payload of every audit
	// entry; empty turns it off. A secret: never logged.
	AuditorKey string
	// AdminKey lets an operator bypass the plan checks of the public
	// checkout (header X-Admin-Key); empty turns the bypass off. A
	// secret: never logged.
	AdminKey string
	// BodyBytes and AccountBodyBytes bound the bytes of request bodies
	// in flight, every route's, in the process and per account, charged
	// as they arrive; a chunk that does not fit waits up to BodyWait,
	// then the youngest waiting request is refused (httpx.BodyGate).
	// Defaults 64 MiB, 16 MiB, 0.
	BodyBytes, AccountBodyBytes int64
	BodyWait                    time.Duration
}

// LogProofs is the tamper-evident event log as the public /v1/log routes
// read it (app.LogProofs, projections/logproofs). They show tree heads,
// hashes and proofs, never an event's content, so they reveal no tenant
// data.
type LogProofs = app.LogProofs
