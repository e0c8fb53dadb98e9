// Package eventstore defines the append-only event log every arr service
// writes to: the Store interface, the event envelope, expected-version
// semantics and the errors implementations return. Implementations live in
// sub-packages (postgres, the default; kurrentdb), the contract suite both
// pass in storetest, and the watermill fan-out in fanout. A store may also
// read the log for chosen event types only (TypeReader; the PostgreSQL
// store does).
package eventstore
