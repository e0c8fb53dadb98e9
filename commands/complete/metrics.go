package complete

import (
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the routing series of /metrics. Safe for concurrent use.
type metrics struct {
	completions *prometheus.CounterVec
	upstream    *prometheus.HistogramVec
	failovers   *prometheus.CounterVec
	costMicro   *prometheus.CounterVec
	tokens      *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		completions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "arr", Subsystem: "gateway", Name: "completions_total",
			Help: "Completions by tier, model, outcome (ok, cut, canceled) and cache (hit or miss).",
		}, []string{"tier", "model", "outcome", "cache"}),
		upstream: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "arr", Subsystem: "gateway", Name: "upstream_first_byte_seconds",
			Help: "Time from sending a request to an upstream model to its response headers.", Buckets: prometheus.ExponentialBuckets(0.001, 2, 16),
		}, []string{"model"}),
		failovers: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "arr", Subsystem: "gateway", Name: "upstream_failures_total",
			Help: "Upstream calls that failed over to the next candidate, by model.",
		}, []string{"model"}),
		costMicro: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "arr", Subsystem: "gateway", Name: "cost_micro_usd_total", Help: "Upstream cost of completions in micro-dollars, by tier.",
		}, []string{"tier"}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "arr", Subsystem: "gateway", Name: "tokens_total", Help: "Tokens of completions by tier and kind (prompt, completion; cache_read and cache_write: the prompt tokens read from and written to the upstream's prompt cache).",
		}, []string{"tier", "kind"}),
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.completions, m.upstream, m.failovers, m.costMicro, m.tokens} {
			_ = reg.Register(c)
		}
	}
	return m
}

func (m *metrics) completed(tier, model, outcome string, cacheHit bool, u Usage, cost int64) {
	cache := "miss"
	if cacheHit {
		cache = "hit"
	}
	m.completions.WithLabelValues(tier, model, outcome, cache).Inc()
	m.costMicro.WithLabelValues(tier).Add(float64(cost))
	m.tokens.WithLabelValues(tier, "prompt").Add(float64(u.Prompt))
	m.tokens.WithLabelValues(tier, "completion").Add(float64(u.Completion))
	if u.CacheRead > 0 {
		m.tokens.WithLabelValues(tier, "cache_read").Add(float64(u.CacheRead))
	}
	if u.CacheWrite > 0 {
		m.tokens.WithLabelValues(tier, "cache_write").Add(float64(u.CacheWrite))
	}
}
