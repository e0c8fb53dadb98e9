// Package datakeys keeps the records service's per-account data keys and
// seals and opens contact data with them (AES-256-GCM). Each data key is
// stored in PostgreSQL wrapped by a master key that only the configuration
// holds; Destroy deletes an account's key, after which everything sealed
// with it is unreadable (crypto-shredding). A Keyring is safe for
// concurrent use.
package datakeys
