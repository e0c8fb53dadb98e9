// Package answerdocs is the answer service's local index as a read model
// (documents and their passages, from DocumentIndexed events) and its
// queries.
package answerdocs
