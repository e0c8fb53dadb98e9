// Package gatewayusage is the gateway's completions, tokens and cost per
// account, UTC day and tier (CompletionRecorded events) and the rollup
// GET /v1/usage answers.
package gatewayusage
