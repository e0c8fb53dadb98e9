package projections

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the runner's Prometheus series, labelled by projection.
type metrics struct {
	position *prometheus.GaugeVec
	lag      *prometheus.GaugeVec
	events   *prometheus.CounterVec
	batches  *prometheus.HistogramVec
	errors   *prometheus.CounterVec
	parked   *prometheus.CounterVec
	stopped  *prometheus.GaugeVec
}

func newMetrics(reg prometheus.Registerer, pool *pgxpool.Pool) *metrics {
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
		parked: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "arr", Subsystem: "projection", Name: "parked_total",
			Help: "Events this process parked because the projection could not apply them.",
		}, []string{"projection"}),
		stopped: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "arr", Subsystem: "projection", Name: "stopped",
			Help: "1 for a projection this process stopped following (ErrStopped: a SQL projection past its disk limit); the reason is in /healthz and arr projections status.",
		}, []string{"projection"}),
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.position, m.lag, m.events, m.batches, m.errors, m.parked, m.stopped, parkedGauge{pool}} {
			_ = reg.Register(c)
		}
	}
	return m
}

// parkedGauge reports arr_projection_parked_events, the events each
// projection has parked now (all processes), read at scrape time.
type parkedGauge struct{ pool *pgxpool.Pool }

var parkedDesc = prometheus.NewDesc("arr_projection_parked_events",
	"Events parked now (projection_parked rows): the projection could not apply them and moved on; arr projections retry applies them.",
	[]string{"projection"}, nil)

func (parkedGauge) Describe(ch chan<- *prometheus.Desc) { ch <- parkedDesc }

func (g parkedGauge) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	rows, err := g.pool.Query(ctx, `SELECT c.name, count(p.position) FROM projection_checkpoints c
		LEFT JOIN projection_parked p ON p.projection = c.name AND p.cleared_at IS NULL WHERE c.name NOT LIKE 'fanout:%' GROUP BY c.name`)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(parkedDesc, err)
		return
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var n int64
		if err := rows.Scan(&name, &n); err != nil {
			ch <- prometheus.NewInvalidMetric(parkedDesc, err)
			return
		}
		ch <- prometheus.MustNewConstMetric(parkedDesc, prometheus.GaugeValue, float64(n), name)
	}
}
