package fanout

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// DefaultTopic is the topic (NATS subject) events are published on when
// Config.Topic is empty.
const DefaultTopic = "arr.events"

// checkpointPrefix keeps forwarder checkpoints apart from projection ones in
// projection_checkpoints.
const checkpointPrefix = "fanout:"

// Config configures a Forwarder. The zero value of every field but Name has a
// working default.
type Config struct {
	// Name identifies the forwarder; its checkpoint is stored under
	// "fanout:"+Name. Renaming a forwarder republishes the whole log.
	Name string
	// Topic is the watermill topic events go to. Default DefaultTopic.
	Topic string
	// BatchSize is how many events are read, published and checkpointed
	// together. Default 500.
	BatchSize int
	// MinBackoff and MaxBackoff bound the wait between retries of a failed
	// read, publish or checkpoint write. Defaults 100ms and 5s.
	MinBackoff time.Duration
	MaxBackoff time.Duration
	// Logger receives retry warnings. Default: discard.
	Logger *slog.Logger
	// Registerer, if set, receives the forwarder's metrics:
	// arr_fanout_published_events_total, arr_fanout_errors_total and
	// arr_fanout_lag_events, each labelled forwarder=Name.
	Registerer prometheus.Registerer
}

// Validate reports whether the configuration can be used.
func (c Config) Validate() error {
	if c.Name == "" {
		return errors.New("fanout config: empty Name")
	}
	if c.BatchSize < 0 {
		return fmt.Errorf("fanout config: negative BatchSize %d", c.BatchSize)
	}
	if c.MinBackoff < 0 || c.MaxBackoff < 0 {
		return errors.New("fanout config: negative backoff")
	}
	return nil
}

func (c *Config) defaults() {
	if c.Topic == "" {
		c.Topic = DefaultTopic
	}
	if c.BatchSize == 0 {
		c.BatchSize = 500
	}
	if c.MinBackoff == 0 {
		c.MinBackoff = 100 * time.Millisecond
	}
	if c.MaxBackoff == 0 {
		c.MaxBackoff = 5 * time.Second
	}
	if c.MaxBackoff < c.MinBackoff {
		c.MaxBackoff = c.MinBackoff
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}
