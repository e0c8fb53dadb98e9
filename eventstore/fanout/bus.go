package fanout

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/pubsub/gochannel"
)

// Bus kinds, the values of ARR_BUS.
const (
	// BusNone disables the fan-out: NewPublisher returns a nil publisher.
	BusNone = "none"
	// BusGoChannel is an in-process watermill GoChannel: for tests and a
	// single process. It has no broker, so messages published while nobody
	// subscribes are dropped, and Publish blocks until every subscriber
	// acked, which is what keeps delivery in order.
	BusGoChannel = "gochannel"
	// BusNATS is NATS JetStream through watermill-nats.
	BusNATS = "nats"
)

// NewPublisher returns the publisher for a bus kind and the function that
// closes it. For BusNone the publisher is nil (no fan-out) and close is a
// no-op. For BusGoChannel the publisher is also the bus's only subscriber
// (see NewPubSub). For BusNATS it connects to natsURL (nats.DefaultURL when
// empty) and creates the JetStream stream for a topic on first publish if no
// stream covers it. The publishers are safe for concurrent use.
func NewPublisher(kind, natsURL string, log *slog.Logger) (message.Publisher, func() error, error) {
	log = orDiscard(log)
	switch kind {
	case BusNone:
		return nil, func() error { return nil }, nil
	case BusGoChannel:
		g := newGoChannel(log)
		return g, g.Close, nil
	case BusNATS:
		p, err := newNATSPublisher(natsURL, log)
		if err != nil {
			return nil, nil, err
		}
		return p, p.Close, nil
	}
	return nil, nil, unknownBus(kind)
}

// NewSubscriber returns a subscriber on a broker bus and the function that
// closes it. Only BusNATS has a broker; a GoChannel subscriber must share its
// publisher, which NewPubSub provides. A NATS subscription is an ephemeral
// JetStream consumer that starts at the beginning of the stream and expects
// every message to be acked or nacked. It has one unacknowledged message at
// most, so a delivery lost with a node or a connection comes again (after
// the 30 s AckWait) before any later message: after dropping repeats, a
// subscriber sees the stream, and so the log, in order. Safe for concurrent
// use.
func NewSubscriber(kind, natsURL string, log *slog.Logger) (message.Subscriber, func() error, error) {
	return NewDurableSubscriber(kind, natsURL, "", log)
}

// NewDurableSubscriber is NewSubscriber with a durable JetStream consumer
// named durable (letters, digits, - and _), when durable is not empty: the
// servers keep its position, so a subscriber that comes back with the same
// name resumes after the last message it acknowledged, and the consumer
// is replicated like its stream (R3 on a three-node cluster), so it
// survives the loss of a node, which an ephemeral consumer does not.
func NewDurableSubscriber(kind, natsURL, durable string, log *slog.Logger) (message.Subscriber, func() error, error) {
	log = orDiscard(log)
	switch kind {
	case BusNATS:
		s, err := newNATSSubscriber(natsURL, durable, log)
		if err != nil {
			return nil, nil, err
		}
		return s, s.Close, nil
	case BusGoChannel:
		return nil, nil, errors.New("gochannel bus: a subscriber must share its publisher's channel; use NewPubSub")
	case BusNone:
		return nil, nil, errors.New("bus none: nothing to subscribe to")
	}
	return nil, nil, unknownBus(kind)
}

// PubSub is a publisher and a subscriber on the same bus, and the one
// function that closes both.
type PubSub struct {
	Publisher  message.Publisher
	Subscriber message.Subscriber
	Close      func() error
}

// NewPubSub returns a publisher and a subscriber on the same bus: for
// BusGoChannel they are the same GoChannel, for BusNATS two connections.
// BusNone is refused. Safe for concurrent use.
func NewPubSub(kind, natsURL string, log *slog.Logger) (PubSub, error) {
	log = orDiscard(log)
	switch kind {
	case BusGoChannel:
		g := newGoChannel(log)
		return PubSub{Publisher: g, Subscriber: g, Close: g.Close}, nil
	case BusNATS:
		pub, closePub, err := NewPublisher(kind, natsURL, log)
		if err != nil {
			return PubSub{}, err
		}
		sub, closeSub, err := NewSubscriber(kind, natsURL, log)
		if err != nil {
			return PubSub{}, errors.Join(err, closePub())
		}
		return PubSub{Publisher: pub, Subscriber: sub, Close: func() error { return errors.Join(closeSub(), closePub()) }}, nil
	case BusNone:
		return PubSub{}, errors.New("bus none: no publisher or subscriber")
	}
	return PubSub{}, unknownBus(kind)
}

func newGoChannel(log *slog.Logger) *gochannel.GoChannel {
	return gochannel.NewGoChannel(gochannel.Config{BlockPublishUntilSubscriberAck: true}, watermill.NewSlogLogger(log))
}

func unknownBus(kind string) error {
	return fmt.Errorf("unknown bus %q: want %q, %q or %q", kind, BusNone, BusGoChannel, BusNATS)
}

func orDiscard(log *slog.Logger) *slog.Logger {
	if log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return log
}
