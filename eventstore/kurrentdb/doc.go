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
//   - It keeps no Merkle tree: it is not an eventstore.MerkleLog, so no
//     signed heads, no proofs and no `arr events verify`. A leaf commits to
//     its event's position, which KurrentDB assigns on the server after
//     the write, outside any transaction arr could extend a tree in, and
//     its positions have gaps, so they cannot number the leaves either.
//     The routes and commands of the tamper-evident log answer
//     eventstore.ErrNoMerkleTree; the contract suite checks that the store
//     does not claim a tree (storetest.Capabilities.MerkleTree is false).
//
// The server must be EventStoreDB 22.6 or later (earlier servers do not
// return positions on stream reads), and the connection's user must be
// allowed to read $all (any user on an --insecure server; admins otherwise).
//
// A Store is safe for concurrent use.
package kurrentdb
