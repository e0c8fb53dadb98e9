// Package signin holds e-mail sign-in and sessions: a magic link (a Link
// aggregate, single use, valid 15 minutes, only its token's SHA-256 kept) and
// the session it starts (a Session aggregate, an opaque token kept only as
// its SHA-256, with an expiry and a sign-out). Values are plain data and not
// safe for concurrent use.
package signin
