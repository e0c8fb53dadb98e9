// Package fanout publishes the event log to a message bus through watermill.
//
// A Forwarder reads every committed event in log order from a checkpoint
// (a row "fanout:<name>" in projection_checkpoints), publishes each as one
// watermill message whose UUID is the event id, and advances the checkpoint
// only after the publisher accepted the batch. Delivery is therefore at
// least once: a crash between publishing and saving the checkpoint publishes
// the batch again on restart. Consumers deduplicate by message UUID; on NATS
// JetStream the broker already drops a re-publish inside the stream's
// duplicate window, because the message UUID travels as Nats-Msg-Id.
//
// NewPublisher and NewSubscriber build the buses ARR_BUS names: "none" (no
// fan-out), "gochannel" (in-process) and "nats" (NATS JetStream via
// watermill-nats).
package fanout
