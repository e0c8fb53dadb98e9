// Package migrations holds arr's SQL schema, embedded in the binary: the
// event store and the projection bookkeeping as ordered goose migrations
// (*.sql here), and Apply, which runs them under a PostgreSQL advisory lock
// so several processes may start at once. Read-model tables are not here:
// each projection owns its DDL and the runner builds it (see projections).
package migrations
