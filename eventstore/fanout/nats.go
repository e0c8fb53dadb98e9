package fanout

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	wmnats "github.com/ThreeDotsLabs/watermill-nats/v2/pkg/nats"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/nats-io/nats.go"
)

// natsPublisher publishes to JetStream, one synchronous, acked publish per
// message, with the message UUID as Nats-Msg-Id so that JetStream drops a
// re-publish within the stream's duplicate window.
type natsPublisher struct {
	*wmnats.Publisher
	streams *streams
}

func newNATSPublisher(natsURL string, log *slog.Logger) (*natsPublisher, error) {
	conn, js, err := connectNATS(natsURL, "arr-fanout-publisher", log)
	if err != nil {
		return nil, err
	}
	p, err := wmnats.NewPublisherWithNatsConn(conn, wmnats.PublisherPublishConfig{
		Marshaler:         &wmnats.NATSMarshaler{},
		SubjectCalculator: wmnats.DefaultSubjectCalculator,
		// The library's AutoProvision names the stream after the topic, and
		// JetStream refuses dots in stream names; streams.ensure does it.
		JetStream: wmnats.JetStreamConfig{TrackMsgId: true, ConnectOptions: jsOptions()},
	}, watermill.NewSlogLogger(log))
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("creating NATS publisher: %w", err)
	}
	return &natsPublisher{Publisher: p, streams: newStreams(js, Replicas(natsURL))}, nil
}

// Publish ensures a stream covers topic, then publishes messages in order,
// stopping at the first failure.
func (p *natsPublisher) Publish(topic string, messages ...*message.Message) error {
	if err := p.streams.ensure(topic); err != nil {
		return err
	}
	if err := p.Publisher.Publish(topic, messages...); err != nil {
		return fmt.Errorf("publishing to NATS subject %s: %w", topic, err)
	}
	return nil
}

// natsSubscriber subscribes with ephemeral JetStream consumers.
type natsSubscriber struct {
	*wmnats.Subscriber
	streams *streams
}

func newNATSSubscriber(natsURL, durable string, log *slog.Logger) (*natsSubscriber, error) {
	conn, js, err := connectNATS(natsURL, "arr-fanout-subscriber", log)
	if err != nil {
		return nil, err
	}
	s, err := wmnats.NewSubscriberWithNatsConn(conn, wmnats.SubscriberSubscriptionConfig{
		Unmarshaler:       &wmnats.NATSMarshaler{},
		SubjectCalculator: wmnats.DefaultSubjectCalculator,
		SubscribersCount:  1, // one consumer keeps the stream's order
		AckWaitTimeout:    30 * time.Second,
		CloseTimeout:      10 * time.Second,
		JetStream: wmnats.JetStreamConfig{
			ConnectOptions: jsOptions(),
			// One message in flight at most (MaxAckPending 1): JetStream
			// delivers the next only once this one is acked. A delivery
			// lost on the way (its node killed, the connection cut) is
			// redelivered only after AckWait; with more in flight the
			// messages after it arrived first, out of log order.
			SubscribeOptions: []nats.SubOpt{nats.DeliverAll(), nats.AckExplicit(), nats.AckWait(30 * time.Second), nats.MaxAckPending(1)},
			// A durable consumer is kept by as many servers as its stream
			// (R3 on a three-node cluster) and survives a node's loss; an
			// ephemeral one lives on one server.
			DurablePrefix: durable,
		},
	}, watermill.NewSlogLogger(log))
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("creating NATS subscriber: %w", err)
	}
	return &natsSubscriber{Subscriber: s, streams: newStreams(js, Replicas(natsURL))}, nil
}

// Subscribe ensures a stream covers topic, then consumes it from the start.
func (s *natsSubscriber) Subscribe(ctx context.Context, topic string) (<-chan *message.Message, error) {
	if err := s.streams.ensure(topic); err != nil {
		return nil, err
	}
	ch, err := s.Subscriber.Subscribe(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("subscribing to NATS subject %s: %w", topic, err)
	}
	return ch, nil
}

func jsOptions() []nats.JSOpt { return []nats.JSOpt{nats.MaxWait(10 * time.Second)} }

// connectNATS connects, failing fast if the server is not there, and
// reconnects forever afterwards.
func connectNATS(natsURL, name string, log *slog.Logger) (*nats.Conn, nats.JetStreamContext, error) {
	if natsURL == "" {
		natsURL = nats.DefaultURL
	}
	shown := redact(natsURL)
	conn, err := nats.Connect(natsURL, nats.Name(name), nats.MaxReconnects(-1), nats.ReconnectWait(time.Second),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil { // nil on our own Close
				log.Warn("NATS disconnected", "url", shown, "err", err)
			}
		}),
		nats.ReconnectHandler(func(*nats.Conn) { log.Info("NATS reconnected", "url", shown) }))
	if err != nil {
		return nil, nil, fmt.Errorf("connecting to NATS at %s: %w", shown, err)
	}
	js, err := conn.JetStream(jsOptions()...)
	if err != nil {
		conn.Close()
		return nil, nil, fmt.Errorf("opening JetStream at %s: %w", shown, err)
	}
	return conn, js, nil
}

// redact hides a password in a NATS URL before it is logged.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparseable NATS URL)"
	}
	return u.Redacted()
}
