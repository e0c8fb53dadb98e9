package embed

import "github.com/prometheus/client_golang/prometheus"

// metrics are the embedding series of /metrics. Safe for concurrent use.
type metrics struct {
	requests  *prometheus.CounterVec
	tokens    *prometheus.CounterVec
	costMicro *prometheus.CounterVec
	upstream  *prometheus.HistogramVec
	failovers *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "arr", Subsystem: "gateway", Name: "embeddings_total", Help: "Embeddings requests answered, by tier and model.",
		}, []string{"tier", "model"}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "arr", Subsystem: "gateway", Name: "embedding_tokens_total", Help: "Input tokens of embeddings requests, by tier.",
		}, []string{"tier"}),
		costMicro: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "arr", Subsystem: "gateway", Name: "embedding_cost_micro_usd_total", Help: "Upstream cost of embeddings in micro-dollars, by tier.",
		}, []string{"tier"}),
		upstream: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "arr", Subsystem: "gateway", Name: "embedding_upstream_seconds",
			Help: "Time from sending an embeddings request to an upstream model to its response headers.", Buckets: prometheus.ExponentialBuckets(0.001, 2, 16),
		}, []string{"model"}),
		failovers: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "arr", Subsystem: "gateway", Name: "embedding_upstream_failures_total",
			Help: "Embedding upstream calls that failed over to the next candidate (or failed the request), by model.",
		}, []string{"model"}),
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.requests, m.tokens, m.costMicro, m.upstream, m.failovers} {
			_ = reg.Register(c)
		}
	}
	return m
}

func (m *metrics) embedded(tier, model string, tokens, cost int64) {
	m.requests.WithLabelValues(tier, model).Inc()
	m.tokens.WithLabelValues(tier).Add(float64(tokens))
	m.costMicro.WithLabelValues(tier).Add(float64(cost))
}
