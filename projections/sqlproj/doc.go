// Package sqlproj runs read models that analysts write in SQL (see
// docs/sql-projections.md for the file format and its rules).
//
// A definition file names the projection, holds the DDL of its tables and
// sections of statements run for events of given types: once per event
// (-- arr:on, the event's fields as bound names :position, :type, :data, …)
// or once per batch (-- arr:batch, the batch's events as the relation
// :events). Parse reads it; Engine.Check tries it in a transaction it rolls
// back; Engine.Projection makes a projections.Projection of it, which the
// runner keeps like the built-in read models (checkpointed batches, typed
// reads of its event types, blue-green rebuilds, parking, metrics).
//
// The statements are compiled into a PL/pgSQL function in the projection's
// schema and run, like its DDL and every query of it, in a session that
// logs in as a PostgreSQL role of its own (never in a session of arr's),
// which can create and write only in that schema and its own rows of the
// runner's tables, and read nothing else (session.go, role.go, guard.go
// say how that holds).
//
// The definitions in force are a read model of their own (Definitions,
// from SQLProjectionDefined and SQLProjectionDropped); Sync and Watch
// keep a runner's SQL projections in step with it.
package sqlproj
