// Package docs holds arr's reference documents and the tests that keep
// them in step with the code, such as the layer test: architecture.md's
// table of top-level folders and what each may import, checked against
// every package's imports.
package docs
