package fanout

import (
	"context"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/arr-dev/arr/domain/wait"
)

// retrier paces retries with capped exponential backoff. Not safe for
// concurrent use; each Run has its own.
type retrier struct {
	ctx     context.Context
	cfg     *Config
	log     *slog.Logger
	errs    prometheus.Counter
	attempt int
}

// failed counts and logs a failure and sleeps before the next attempt. It
// returns false once ctx has ended: the caller must stop retrying.
func (r *retrier) failed(what string, err error, attrs ...any) bool {
	r.errs.Inc()
	if r.ctx.Err() != nil {
		r.log.Info("fan-out forwarder: "+what+" failed while stopping; it is redone at the next start",
			append(attrs, "err", err)...)
		return false
	}
	backoff := r.cfg.MinBackoff << min(r.attempt, 20)
	if backoff > r.cfg.MaxBackoff || backoff <= 0 {
		backoff = r.cfg.MaxBackoff
	}
	r.attempt++
	r.log.Warn("fan-out forwarder: "+what+" failed, retrying", append(attrs, "err", err, "attempt", r.attempt, "retry_in", backoff)...)
	return wait.Sleep(r.ctx, backoff)
}

// reset starts the backoff over after a success.
func (r *retrier) reset() { r.attempt = 0 }
