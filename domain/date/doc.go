// Package date holds the one rule for the dates and times callers send
// (the records service's as_of, on tiles, signals and list rows; a key's
// expires_at on the account pages, PATCH /v1/me/keys and `arr keys
// mint|limits --expires-at`; a layer load's source date and
// --crawled-at): how each is written and the range it
// must fall in, so that no value reaches a query or an event that the
// database or a later reader cannot represent (PostgreSQL has no year 0;
// Go formats years past 9999 in ways RFC 3339 readers refuse). Every
// parameter of every service that takes a date or a time reads it with
// Day or Instant.
package date
