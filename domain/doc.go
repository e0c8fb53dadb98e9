// Package domain holds what arr knows about the world, free of infrastructure:
// the error set every layer maps into, the Event contract with its type
// registry, and (in sub-packages) the aggregates and pure rules.
//
// It imports the standard library and github.com/google/uuid only; a test in
// this package keeps it so.
package domain
