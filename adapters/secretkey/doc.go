// Package secretkey reads and makes the server's 32-byte secrets — the
// records master key, the audit hash key — written as 64 hex digits or
// base64. Where a process finds them (a variable, or a file under its
// data directory) and whether they are the database's is package
// boundkey's business. Functions are safe for concurrent use.
package secretkey
