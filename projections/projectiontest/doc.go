// Package projectiontest sets up a runner over a real PostgreSQL event
// store for the tests of the runner and of each read model.
package projectiontest
