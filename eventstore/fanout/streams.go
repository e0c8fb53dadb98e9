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
	js    nats.JetStreamManager
	mu    sync.Mutex
	ready map[string]bool
}

func newStreams(js nats.JetStreamManager) *streams {
	return &streams{js: js, ready: map[string]bool{}}
}

// StreamName is the JetStream stream the fan-out creates for a topic when no
// stream covers it yet: the topic upper-cased, with the characters stream
// names may not hold replaced by "_" ("arr.events" → "ARR_EVENTS").
func StreamName(topic string) string {
	return strings.ToUpper(strings.NewReplacer(".", "_", " ", "_", "*", "_", ">", "_", "/", "_", "\\", "_").Replace(topic))
}

// ensure uses a stream an operator provisioned for topic, or creates one
// with file storage and JetStream's default limits and duplicate window.
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
