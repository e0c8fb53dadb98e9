// Package boundkey binds the keys that protect data to the database they
// protect: the records master key, the event log's signing key and the
// gateway's audit HMAC key. The first process that makes a key (or finds
// one from before the binding existed) records the key's fingerprint,
// never the key, in the table key_fingerprints; every later process
// compares the key it was given (a variable, or a file under its data
// directory) with that fingerprint when it starts, and refuses, naming both
// fingerprints and where it looked, instead of using or making another.
// No key file is made when the database names a key already.
//
// A Binder is safe for concurrent use, also by several processes: of two
// processes recording a key at once, the first wins and the other compares
// its key with the winner's.
package boundkey
