// Package app is arr's application: the commands that change state and the
// queries that read the read models, gathered once (Application) and
// handed to the three services, the CLI and the tests. Each query's
// read-model interface sits in the file named for it; the projections'
// packages implement them (projections/identity, projections/parcels, …).
package app
