// Package localindex is the answer service's "local" search backend: a
// Bleve full-text index with BM25 scoring in a directory on disk (by
// default .arr/answer-index). Documents are keyed by their absolute URL and
// keep their text, so a local hit needs no fetch.
//
// The index is opened per operation: searches open it read-only (many at
// once, in any number of processes), Add opens it for writing (one writer;
// others wait up to LockTimeout). So `arr answer index add` works while
// `arr up` serves. An Index is safe for concurrent use.
package localindex
