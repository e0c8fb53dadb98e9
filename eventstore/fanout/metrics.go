package fanout

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the forwarder's Prometheus collectors. Without a Registerer
// they are still updated but never exported.
type metrics struct {
	published prometheus.Counter
	errs      prometheus.Counter
	lag       prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer, name string) (*metrics, error) {
	labels := prometheus.Labels{"forwarder": name}
	m := &metrics{
		published: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "arr_fanout_published_events_total", ConstLabels: labels,
			Help: "Events the fan-out forwarder published to the bus (re-publishes after a failure count again).",
		}),
		errs: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "arr_fanout_errors_total", ConstLabels: labels,
			Help: "Failed attempts to read, publish or checkpoint a batch; each is retried.",
		}),
		lag: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "arr_fanout_lag_events", ConstLabels: labels,
			Help: "Events committed to the log but not yet published (head minus checkpoint).",
		}),
	}
	if reg == nil {
		return m, nil
	}
	var err error
	if m.published, err = register(reg, m.published); err != nil {
		return nil, err
	}
	if m.errs, err = register(reg, m.errs); err != nil {
		return nil, err
	}
	if m.lag, err = register(reg, m.lag); err != nil {
		return nil, err
	}
	return m, nil
}

// register registers c, or returns the collector already registered under
// the same name and labels (a forwarder recreated with the same name).
func register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	err := reg.Register(c)
	if err == nil {
		return c, nil
	}
	var already prometheus.AlreadyRegisteredError
	if errors.As(err, &already) {
		if existing, ok := already.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	return c, fmt.Errorf("registering fan-out metrics: %w", err)
}
