// Package analysis holds the SQL projections analysts define: the
// SQLProjectionDefined and SQLProjectionDropped events and the aggregate
// that decides them (a name is defined at most once at a time; only a
// defined projection can be dropped). The definition itself, a file of
// SQL, is compiled and run by projections/sqlproj; here it is text that
// passed the caller-text rule.
//
// Values here are plain data; a Definition is not safe for concurrent use.
package analysis
