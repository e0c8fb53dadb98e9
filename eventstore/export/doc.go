// Package export writes a slice of the event log to a file analysts'
// tools read: NDJSON (one event a line, the bytes `arr events tail
// --json` prints, which an auditor can hash into the event's Merkle
// leaf) or Parquet (typed columns for the envelope, the payload and the
// metadata as JSON columns), selected by position range and by an
// eventstore.Filter (types, stream, time), applied in the store's query
// where the store can (eventstore.FilterReader).
//
// Export streams: it reads the log in batches while the previous batch
// is written, and Parquet row groups are flushed as they fill, so memory
// stays flat whatever the log's length.
package export
