// Package projections builds arr's read models from the event log.
//
// A Projection declares itself once, as a Spec: its name (the checkpoint
// key and its PostgreSQL schema, rm_<name>: renaming one replays it), the
// DDL of its tables, its handlers, one per event type (On, which gets the
// payload decoded by the registry; Batch when the projection gathers a
// batch in memory and writes it at once), and its options as fields: it
// fails closed, cuts batches, defers indexes, runs its transactions in
// sessions of its own role, builds its schema itself. The Runner reads
// them from the spec, never by asking a projection what else it is. It
// keeps every projection's checkpoint and read model in step: per batch
// it locks the checkpoint row, applies the events and advances the
// checkpoint in one transaction, so a crash loses nothing and counts
// nothing twice, and several runner processes can share one database.
//
// A projection reads only the event types of its handlers, where the
// store can (eventstore.TypeReader, as the PostgreSQL store does): its
// checkpoint moves past the other events without their being read or
// applied, so a busy stream of one type costs the projections that ignore
// it almost nothing. A projection with AllEvents sees every event (as
// logstats counts them); a SQL projection's types are known at run time
// and it reads their payloads as JSON (Spec.JSON).
//
// Rebuild and Replay build a read model into a shadow schema while the live
// one keeps serving, then swap them in one transaction. WaitFor gives
// read-your-writes to handlers: it returns once a projection has passed a
// position, applying pending batches itself if no runner got there first.
//
// The runner is this package; each read model arr ships is a package
// beside it (identity, parcels, lists, usage, …) holding the projection and
// its queries, and builtin lists them all. readapi/app gathers the queries
// behind the interfaces the services call.
package projections
