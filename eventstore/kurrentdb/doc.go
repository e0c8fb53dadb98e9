// Package kurrentdb is the event store on KurrentDB (formerly EventStoreDB),
// spoken to over gRPC with the official Go client
// (github.com/EventStore/EventStore-Client-Go/v4/esdb). It passes the same
// contract as the PostgreSQL store (eventstore/storetest) with these
// differences, all forced by KurrentDB itself:
//
//   - Positions are KurrentDB commit positions: byte offsets in the
//     transaction log. They increase strictly in commit order (KurrentDB
//     gives every event written over gRPC its own commit position) but have
//     gaps, and the log also holds the server's own events ($-prefixed
//     streams and types), which this store never returns.
//   - AppendBulk is not atomic across streams: KurrentDB has no multi-stream
//     transactions. Every expectation is checked before anything is written,
//     and a retry of the same bulk is safe, but a crash or a concurrent
//     writer midway can leave a prefix of the bulk written.
//   - Event ids are unique per stream, not per log: KurrentDB has no index by
//     event id, so an id reused in a different stream is not detected (the
//     PostgreSQL store refuses it with eventstore.ErrDuplicateEventID).
//   - A successful append costs three round trips (read the stream's tail to
//     recognise retries, append, read the events back for their positions).
//
// The server must be EventStoreDB 22.6 or later (earlier servers do not
// return positions on stream reads), and the connection's user must be
// allowed to read $all (any user on an --insecure server; admins otherwise).
//
// A Store is safe for concurrent use.
package kurrentdb
