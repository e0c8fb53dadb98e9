// Package eventcatalog is the event catalog: for every event type the registry
// (domain/catalog.Registry) holds, its schema versions, the version a
// handler receives (the current one: the registry upcasts every older
// payload), the JSON Schema of its payload generated from the Go types,
// each field with its meaning, and, from the log-stats read model, how
// often it occurs in the log and where.
//
// A field's meaning is its Go doc comment, kept beside the field in
// domain/. The binary carries no source, so the comments are extracted
// once (Extract) into fielddocs.json, embedded here; docs/events.md is
// rendered by the same code (Markdown). `go generate ./docs` rewrites
// both, and docs/events_test.go fails when either drifts from the code.
package eventcatalog
