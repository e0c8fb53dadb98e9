// Package identity is the read model of accounts, API keys and sign-in
// sessions, its queries (authentication, key listings, account lookups)
// and the process's cache of principals, kept in step by LISTEN/NOTIFY.
package identity
