// Package commands is arr's write side: one handler per command, each
// loading what it needs, letting domain code decide, and appending the
// resulting events under an expected version. A lost race is retried from a
// fresh load; a real conflict is reported, never overwritten. Every handler
// returns the log position of what it appended, for read-your-writes.
//
// Handlers are safe for concurrent use.
package commands
