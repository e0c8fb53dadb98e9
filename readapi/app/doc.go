// Package app is arr's application: the commands that change state, the
// queries that read the read models and the use cases that are more than
// one command (a completion, embeddings, billing), gathered once (Application) by
// cmd/arr's composition root and handed to the three services, the CLI
// and the component tests. Each query's read-model interface sits in the
// file named for it; the projections' packages implement them
// (projections/identity, projections/parcels, …).
package app
