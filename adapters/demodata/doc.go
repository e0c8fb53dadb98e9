// Package demodata embeds the real public-record extracts arr ships with
// (see README.md for their sources and licences): the layer files and
// mappings `arr up` loads on first start, and the Census gazetteer of states
// and counties the key-less API serves. Everything here is read-only and
// safe for concurrent use.
package demodata
