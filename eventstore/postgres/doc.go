// Package postgres is the default event store: the log in one PostgreSQL
// table, positions handed out under a single row lock so they increase in
// commit order with no gaps, concurrent appends group-committed by one
// writer goroutine per Store, and COPY for bulk imports. LISTEN/NOTIFY wakes
// waiting readers.
//
// A Store is safe for concurrent use, and several processes may share one
// database: the row lock on event_log_head orders their commits.
package postgres
