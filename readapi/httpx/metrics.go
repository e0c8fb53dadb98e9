package httpx

import (
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the HTTP series of all services, labelled by service.
type Metrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

// NewMetrics registers the HTTP series on reg (nil registers nothing).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "arr", Subsystem: "http", Name: "requests_total", Help: "HTTP requests by service, route, method and status.",
		}, []string{"service", "route", "method", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "arr", Subsystem: "http", Name: "request_seconds", Help: "HTTP request latency by service and route.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
		}, []string{"service", "route"}),
	}
	if reg != nil {
		_ = reg.Register(m.requests)
		_ = reg.Register(m.duration)
	}
	return m
}

func (m *Metrics) middleware(service string) gin.HandlerFunc {
	return func(c *gin.Context) {
		start := time.Now()
		// Deferred: an answer cut off by a panic (http.ErrAbortHandler,
		// which the recoverer passes on) is counted too, by the status it
		// was sent with; the panic goes on.
		defer func() {
			route := c.FullPath()
			if route == "" {
				route = "unmatched"
			}
			m.requests.WithLabelValues(service, route, c.Request.Method, strconv.Itoa(c.Writer.Status())).Inc()
			m.duration.WithLabelValues(service, route).Observe(time.Since(start).Seconds())
		}()
		c.Next()
	}
}
