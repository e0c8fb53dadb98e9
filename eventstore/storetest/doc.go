// Package storetest is the contract every eventstore.Store implementation
// must pass. Run it from the implementation's own tests with a factory that
// returns a fresh store; tests use unique stream names, so a shared server
// (KurrentDB) works as well as a fresh database.
package storetest
