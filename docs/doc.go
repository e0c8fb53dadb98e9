// Package docs holds arr's reference documents and the tests that keep
// them in step with the code, such as the layer test: architecture.md's
// table of top-level folders and what each may import, checked against
// every package's imports; and the event catalog, events.md, generated
// from the event registry and the doc comments of the event types.
package docs

//go:generate go run ../scripts/eventsdoc -root ..
