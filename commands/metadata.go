package commands

import "github.com/arr-dev/arr/eventstore"

// Metadata is what a command's caller says of the request that caused it
// (actor, request and correlation ids); it travels with every event the
// command appends. Callers (readapi) name it here, not in the event store.
type Metadata = eventstore.Metadata
