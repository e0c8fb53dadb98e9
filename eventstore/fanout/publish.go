package fanout

import (
	"context"
	"errors"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/arr-dev/arr/eventstore"
)

// saveTimeout bounds one checkpoint write, which runs even after shutdown
// began so that a published batch is not needlessly published again.
const saveTimeout = 10 * time.Second

// forward publishes one batch and then saves the checkpoint at its last
// event. It reports false if ctx ended before both were done; the batch is
// then published again by the next Run. The publishers NewPublisher returns
// publish one message at a time, each acknowledged before the next is sent,
// and stop at the first failure; a failed batch is published again whole, from its first
// event, in order. So no event reaches the stream before every event ahead
// of it in the log has: the stream's first occurrences are the log in order.
func (f *Forwarder) forward(ctx context.Context, r *retrier, evs []eventstore.Event) (bool, error) {
	first, last := evs[0].Position, evs[len(evs)-1].Position
	msgs := make([]*message.Message, len(evs))
	for i, e := range evs {
		m, err := ToMessage(e)
		if err != nil {
			return false, err
		}
		msgs[i] = m
	}
	for {
		err := f.pub.Publish(f.cfg.Topic, msgs...)
		if err == nil {
			break
		}
		if !r.failed("publishing a batch", err, "first_position", first, "last_position", last) {
			return false, nil
		}
	}
	f.m.published.Add(float64(len(msgs)))
	for {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), saveTimeout)
		err := f.cp.save(sctx, last)
		cancel()
		if err == nil {
			return true, nil
		}
		if errors.Is(err, errCheckpointGone) {
			return false, err
		}
		if !r.failed("saving the checkpoint", err, "position", last) {
			return false, nil
		}
	}
}
