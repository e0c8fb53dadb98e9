package anthropic

// The event names of a Messages stream, in the order they come: one
// message_start, for each content block a content_block_start, its
// content_block_deltas and a content_block_stop, then message_delta and
// message_stop, the end. ping may come anywhere; error ends a stream that
// failed.
const (
	EventMessageStart      = "message_start"
	EventContentBlockStart = "content_block_start"
	EventContentBlockDelta = "content_block_delta"
	EventContentBlockStop  = "content_block_stop"
	EventMessageDelta      = "message_delta"
	EventMessageStop       = "message_stop"
	EventPing              = "ping"
	EventError             = "error"
)
