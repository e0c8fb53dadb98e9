package fanout

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/nats-io/nats.go"
)

// streams makes sure a JetStream stream captures each topic used, once per
// topic per connection. Safe for concurrent use.
type streams struct {
	js nats.JetStreamManager
	// replicas is how many JetStream servers keep a stream the fan-out
	// creates.
	replicas int
	mu       sync.Mutex
	ready    map[string]bool
}

func newStreams(js nats.JetStreamManager, replicas int) *streams {
	return &streams{js: js, replicas: max(replicas, 1), ready: map[string]bool{}}
}

// Replicas is how many replicas a stream the fan-out creates gets on a
// NATS_URL: one per server it names, at most 3 (JetStream's R3, which
// keeps every acknowledged message through the loss of any one server
// and a quorum of 2), so that a three-node cluster given as
// nats://a:4222,nats://b:4222,nats://c:4222 loses nothing when one node
// stops. A single URL makes a stream of one replica, as before; a stream
// an operator provisioned is used as it is.
func Replicas(natsURL string) int {
	n := 0
	for _, u := range strings.Split(natsURL, ",") {
		if strings.TrimSpace(u) != "" {
			n++
		}
	}
	return min(max(n, 1), 3)
}

// StreamName is the JetStream stream the fan-out creates for a topic when no
// stream covers it yet: the topic upper-cased, with the characters stream
// names may not hold replaced by "_" ("arr.events" → "ARR_EVENTS").
func StreamName(topic string) string {
	return strings.ToUpper(strings.NewReplacer(".", "_", " ", "_", "*", "_", ">", "_", "/", "_", "\\", "_").Replace(topic))
}

// ensure uses a stream an operator provisioned for topic, or creates one
// with file storage, s.replicas replicas and JetStream's default limits
// and duplicate window.
func (s *streams) ensure(topic string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ready[topic] {
		return nil
	}
	_, err := s.js.StreamNameBySubject(topic)
	switch {
	case err == nil:
	case errors.Is(err, nats.ErrNoMatchingStream):
		_, err = s.js.AddStream(&nats.StreamConfig{
			Name:     StreamName(topic),
			Subjects: []string{topic},
			Storage:  nats.FileStorage,
			Replicas: s.replicas,
		})
		if err != nil {
			return fmt.Errorf("creating JetStream stream %s for %s: %w", StreamName(topic), topic, err)
		}
	default:
		return fmt.Errorf("finding the JetStream stream for %s: %w", topic, err)
	}
	s.ready[topic] = true
	return nil
}
