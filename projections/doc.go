// Package projections builds arr's read models from the event log.
//
// A Projection names itself (its name is its checkpoint key and its
// PostgreSQL schema, rm_<name>: renaming one replays it), declares the DDL of
// its tables, and applies batches of events inside a transaction. The Runner
// keeps every projection's checkpoint and read model in step: per batch it
// locks the checkpoint row, applies the events and advances the checkpoint in
// one transaction, so a crash loses nothing and counts nothing twice, and
// several runner processes can share one database.
//
// A projection that names the event types it applies (EventFilter) is
// read only those, where the store can (eventstore.TypeReader, as the
// PostgreSQL store does): its checkpoint moves past the other events
// without their being read or applied, so a busy stream of one type costs
// the projections that ignore it almost nothing. A projection without the
// list sees every event, which is what a new analysis projection wants.
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
