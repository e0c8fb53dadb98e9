package projections

import (
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the runner's Prometheus series, labelled by projection.
type metrics struct {
	position *prometheus.GaugeVec
	lag      *prometheus.GaugeVec
	events   *prometheus.CounterVec
	batches  *prometheus.HistogramVec
	errors   *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		position: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "arr", Subsystem: "projection", Name: "position",
			Help: "Log position the projection has applied up to.",
		}, []string{"projection"}),
		lag: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "arr", Subsystem: "projection", Name: "lag_events",
			Help: "Events between the log head and the projection's checkpoint.",
		}, []string{"projection"}),
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "arr", Subsystem: "projection", Name: "events_total",
			Help: "Events applied; rate() of it is events/s.",
		}, []string{"projection"}),
		batches: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "arr", Subsystem: "projection", Name: "batch_seconds",
			Help:    "Time to apply one batch and advance the checkpoint.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
		}, []string{"projection"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "arr", Subsystem: "projection", Name: "errors_total",
			Help: "Batches that failed and were retried.",
		}, []string{"projection"}),
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.position, m.lag, m.events, m.batches, m.errors} {
			_ = reg.Register(c)
		}
	}
	return m
}
