package commands

import "github.com/arr-dev/arr/eventstore"

// Metadata is what a command's caller says of the request that caused it
// (actor, request and correlation ids); it travels with every event the
// command appends. Callers (readapi) name it here, not in the event store.
// Build it with NewMetadata.
type Metadata = eventstore.Metadata

// NewMetadata is the one way to build a command's Metadata. actor says who
// asked: "key:<key id>", "session:<session id>", "account-page:<service>",
// "stripe", "cli:<who>" or "arr:<part of arr>". requestID is the id of the
// HTTP request that caused the command (readapi's request-id middleware,
// httpx.CommandMetadata); it is the correlation id too, so every event one
// request caused is found by either. It is empty only where no request
// caused the command (the CLI, arr's own indexing).
func NewMetadata(actor, requestID string) Metadata {
	return Metadata{Actor: actor, RequestID: requestID, CorrelationID: requestID}
}
