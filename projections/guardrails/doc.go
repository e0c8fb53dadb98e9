// Package guardrails is the read model of the gateway's guardrails: each
// account's policy and each gateway key's own (GuardrailsSet), and the
// queries the gateway enforces them from (Effective: a key's own, else its
// account's) and the account's settings pages show.
package guardrails
