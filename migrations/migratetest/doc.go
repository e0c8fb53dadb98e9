// Package migratetest gives each test its own migrated PostgreSQL database,
// cloned from a template that is built once per schema version, so tests run
// in parallel without sharing state.
package migratetest
