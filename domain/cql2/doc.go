// Package cql2 parses the text encoding of OGC CQL2 (OGC API – Features –
// Part 3, 21-065r2), conformance class Basic CQL2, into an AST: boolean
// logic (AND, OR, NOT, parentheses), comparisons (=, <>, <, <=, >, >=)
// between properties and literals or between two properties, IS [NOT]
// NULL, and the advanced comparisons [NOT] LIKE, [NOT] BETWEEN and [NOT]
// IN; literals are strings, numbers, booleans, DATE('…') and
// TIMESTAMP('…'). Spatial and temporal functions, arrays, arithmetic and
// custom functions are not part of it and are refused with the place
// they start at.
//
// Parse is bounded (Limits: input length, nesting depth, node count) and
// every error is a domain validation error (code invalid_filter, field
// filter) that says at which character what was expected. The AST names
// properties as written; which properties exist and what they mean is
// the caller's allow-list. It imports the standard library and domain
// only. Safe for concurrent use: nothing is shared.
package cql2
