// Package auditentries is the gateway's audit read model: one row per
// CompletionRecorded with its chain context and whether it verified, and
// the query GET /v1/audit/{hash} answers from.
package auditentries
