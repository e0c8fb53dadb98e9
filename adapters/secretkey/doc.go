// Package secretkey reads the server's 32-byte secrets — the records
// master key, the audit hash key — from configuration, or else from a file
// under the data directory that the first process to need it creates
// (random, mode 0600). Processes sharing the directory read the same file,
// so they use the same secret. Functions are safe for concurrent use, also
// across processes.
package secretkey
