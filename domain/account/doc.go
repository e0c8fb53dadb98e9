// Package account holds the Account aggregate: who a customer is, their plan,
// and the API keys they hold for each service. Its events are AccountCreated,
// KeyIssued and KeyRevoked; its rules are the per-service key prefixes, the
// active-key limits and the shape of a key secret.
//
// Values here are plain data; an Account is not safe for concurrent use.
package account
