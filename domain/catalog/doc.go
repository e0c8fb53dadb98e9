// Package catalog is the registry of every event type arr records: the
// one place that lists the domain packages' event groups, so every reader
// of the log (projections, commands, exports, the event catalog) decodes
// through the same registry, each event upcast to its current schema
// version.
package catalog
