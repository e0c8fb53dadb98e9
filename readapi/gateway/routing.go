package gateway

import "github.com/arr-dev/arr/readapi/app"

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
}

// LogProofs is the tamper-evident event log as the public /v1/log routes
// read it (app.LogProofs, projections/logproofs). They show tree heads,
// hashes and proofs, never an event's content, so they reveal no tenant
// data.
type LogProofs = app.LogProofs
