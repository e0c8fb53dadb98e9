package httpx

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"

	"github.com/arr-dev/arr/projections"
	"github.com/arr-dev/arr/readapi/app"
	"github.com/arr-dev/arr/readapi/metering"
	"github.com/arr-dev/arr/readapi/ratelimit"
)

// Deps are what every service's server is built from.
type Deps struct {
	// App is the application: handlers call one of its commands, use
	// cases or queries per request. cmd/arr builds it (its composition
	// root); a server builds nothing of its own.
	App app.Application
	// Site is the service's public address: the base URL of the links it
	// builds (sign-in mail, billing return URLs) and the hosts that may ask
	// for them. Each service has its own (cmd/arr sets it per service);
	// with the zero Site, routes that build links answer 500.
	Site Site
	// Version, Logger, Metrics and Gatherer are the engine's (Base).
	Version  string
	Logger   *slog.Logger
	Metrics  *Metrics
	Gatherer prometheus.Gatherer
	// TrustedProxies are the peers whose forwarding headers are believed
	// (Base.TrustedProxies); empty trusts nobody.
	TrustedProxies []netip.Prefix
	// BodyTimeout is how long a request body may take to arrive
	// (Base.BodyTimeout); 0 is DefaultBodyTimeout.
	BodyTimeout time.Duration
	// Quota enforces the plans' request limits and the per-IP limit of
	// public routes; nil limits nothing (tests of other parts).
	Quota *ratelimit.Quota
	// Tracer starts a server span per request (Base.Tracer) and is the
	// tracer of the spans handlers start; nil traces nothing.
	Tracer trace.Tracer
	// Meter turns admitted, served keyed requests into usage events; nil counts
	// nothing.
	Meter *metering.Meter
}

// HealthReport is the shared part of every /healthz body.
type HealthReport struct {
	Status      string                     `json:"status"` // "ok" or "degraded"
	Service     string                     `json:"service"`
	Version     string                     `json:"version"`
	Time        time.Time                  `json:"time"`
	Database    Check                      `json:"database"`
	Projections map[string]ProjectionCheck `json:"projections,omitempty"`
	// ReadReplica is the streaming replica the read models are read from
	// (ARR_READ_DATABASE_URL); absent without one.
	ReadReplica *projections.ReplicaHealth `json:"read_replica,omitempty"`
	// Problems names what makes the status "degraded".
	Problems []string `json:"problems,omitempty"`
}

// BaseHealth checks the database and the read models. The status is 200
// when the database answers and 503 otherwise; the body's status is
// "degraded", with the problems named, when the database is down or a
// projection fails or has parked events.
func (d Deps) BaseHealth(ctx context.Context, service string) (int, HealthReport) {
	r := HealthReport{Status: "ok", Service: service, Version: d.Version, Time: time.Now().UTC(), Database: CheckDatabase(ctx, d.App.Queries.Status)}
	if r.Database.Status != "ok" {
		r.Status = "degraded"
		return http.StatusServiceUnavailable, r
	}
	if d.App.Head != nil {
		if head, err := d.App.Head(ctx); err == nil {
			var err error
			if r.Projections, err = d.App.Queries.Status.Health(ctx, head); err != nil {
				r.Problems = append(r.Problems, "projections could not be checked")
			}
		}
	}
	if d.App.ReadReplica != nil {
		h := d.App.ReadReplica()
		r.ReadReplica = &h
		if h.State != "ok" && h.State != "starting" {
			r.Problems = append(r.Problems, fmt.Sprintf("the read replica is %s (reads go to the primary): lag %.1f s of at most %.1f s%s",
				h.State, h.LagSeconds, h.MaxLagSeconds, map[bool]string{true: "; " + h.Error, false: ""}[h.Error != ""]))
		}
	}
	names := make([]string, 0, len(r.Projections))
	for n := range r.Projections {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if p := r.Projections[n].Problem(n); p != "" {
			r.Problems = append(r.Problems, p)
		}
	}
	if len(r.Problems) > 0 {
		r.Status = "degraded"
	}
	return http.StatusOK, r
}
