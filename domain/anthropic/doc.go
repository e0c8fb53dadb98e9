// Package anthropic holds the small wire types of Anthropic's Messages API
// that more than one layer reads: the usage of a reply or a stream
// (cached input tokens included), the error body, the stream's event
// names and the default anthropic-version. It decodes with the standard
// library only, so the gateway's handlers (readapi), the completion
// commands and the upstream adapter share one reading of the wire.
//
// Its functions are pure and safe for concurrent use; a Usage is a value.
package anthropic
