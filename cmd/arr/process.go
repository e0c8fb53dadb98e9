package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/arr-dev/arr/cmd/arr/internal/lifecycle"
	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/eventstore/fanout"
	"github.com/arr-dev/arr/projections"
	"github.com/arr-dev/arr/readapi/answerapi"
	"github.com/arr-dev/arr/readapi/gateway"
	"github.com/arr-dev/arr/readapi/httpx"
	"github.com/arr-dev/arr/readapi/recordsapi"
)

// process is one arr process: the components of its roles, composed by a
// lifecycle group that owns their shutdown order and grace period, and the
// URLs its services listen on.
type process struct {
	group *lifecycle.Group
	// urls maps each HTTP service of the process to its listen URL, bases
	// to the base URL it builds its links on.
	urls, bases map[string]string
	// seeded is closed when the answer service's seeding of the local
	// index is over (at once for a process without it).
	seeded  chan struct{}
	closers []func()
}

// newProcess builds the components of roles over the system: for the
// projections role the runner, the SQL projections' watch, the head signer
// and the bus fan-out; for the HTTP roles their servers, the quota cleanup,
// the key cache's listener and the usage meter; the answer service's
// recorder, index refresh and seeding; the gateway's audit chain.
func newProcess(ctx context.Context, s *system, roles []string, version string) (*process, error) {
	p := &process{group: lifecycle.New(s.cfg.ShutdownGrace, s.log), urls: map[string]string{}, bases: map[string]string{},
		seeded: make(chan struct{})}
	ok := false
	defer func() {
		if !ok {
			p.close()
		}
	}()
	// The bus connection and the signer are made before any listener
	// opens, so a bad ARR_BUS fails the start cleanly.
	if slices.Contains(roles, "projections") {
		if err := p.addProjections(s); err != nil {
			return nil, err
		}
	}
	if webRoles(roles) {
		if err := p.addServices(ctx, s, roles, version); err != nil {
			return nil, err
		}
	}
	if s.replica != nil && webRoles(roles) {
		p.group.Add(lifecycle.Intake, lifecycle.Component{Name: "read replica monitor", Run: s.replica.Run})
	}
	if slices.Contains(roles, "records") {
		if err := p.addDispatcher(s, version); err != nil {
			return nil, err
		}
	}
	if slices.Contains(roles, "answer") {
		p.group.Add(lifecycle.Recorders, lifecycle.Component{Name: "served answers", Run: s.served.Run})
		if err := p.addResearchJobs(s, version); err != nil {
			return nil, err
		}
		p.group.Add(lifecycle.Intake, lifecycle.Func("answer index seed", func(ctx context.Context) {
			defer close(p.seeded)
			s.seedDocs(ctx)
		}))
	} else {
		close(p.seeded)
	}
	if slices.Contains(roles, "gateway") {
		// Like the meter, the audit chain outlives the HTTP drain, so
		// completions served during shutdown are recorded (entries not
		// appended by the end of the grace period fail).
		p.group.Add(lifecycle.Recorders, lifecycle.Component{Name: "audit chain", Run: quiet(s.chain.Run)})
	}
	p.addTraces(s)
	if s.cfg.PprofAddr != "" {
		if err := p.addPprof(s.cfg.PprofAddr, s.log); err != nil {
			return nil, err
		}
	}
	ok = true
	return p, nil
}

// close releases what newProcess opened (listeners not yet served, the
// quota store, the bus publisher).
func (p *process) close() {
	for i := len(p.closers) - 1; i >= 0; i-- {
		p.closers[i]()
	}
	p.closers = nil
}

// addProjections adds the projection runner, the SQL projections' watch,
// the signer of the log's tree heads and the bus fan-out.
func (p *process) addProjections(s *system) error {
	log := s.log
	p.group.Add(lifecycle.Intake, lifecycle.Component{Name: "projections", Run: func(ctx context.Context) error {
		log.Info("projections running", "projections", len(s.runner.Projections()))
		return s.runner.Run(ctx)
	}})
	p.group.Add(lifecycle.Intake, lifecycle.Func("SQL projection watch", func(ctx context.Context) { s.sql.Watch(ctx, s.runner, time.Second) }))
	signer, err := s.logSigner(log)
	switch {
	case errors.Is(err, eventstore.ErrNoMerkleTree):
		log.Warn("no signed tree heads: " + err.Error())
	case err != nil:
		return fmt.Errorf("the event log's signer: %w", err)
	default:
		log.Info("signing the event log's tree heads", "origin", s.cfg.LogOrigin, "verifier_key", signer.VerifierKey(),
			"every_events", s.cfg.LogCheckpointEvery, "every", s.cfg.LogCheckpointTime)
		// One process at a time signs (the others stand by).
		p.group.Add(lifecycle.Intake, lifecycle.Component{Name: "head signer", Run: quiet(projections.Exclusive(s.pool, log, "head signer", signer.Run))})
	}
	if s.cfg.Bus == fanout.BusNone {
		return nil
	}
	pub, closePub, err := fanout.NewPublisher(s.cfg.Bus, s.cfg.NATSURL, log)
	if err != nil {
		return fmt.Errorf("event bus %s: %w", s.cfg.Bus, err)
	}
	p.closers = append(p.closers, func() { _ = closePub() })
	fwd, err := fanout.NewForwarder(s.pool, s.store, pub, fanout.Config{Name: "bus", Logger: log, Registerer: s.registry})
	if err != nil {
		return err
	}
	p.group.Add(lifecycle.Intake, lifecycle.Component{Name: "fan-out", Run: func(ctx context.Context) error {
		log.Info("publishing every event to the bus", "bus", s.cfg.Bus, "topic", fanout.DefaultTopic)
		return fwd.Run(ctx)
	}})
	return nil
}

// addServices adds the HTTP servers of roles, and what they share: the
// quotas and the usage meter, and the key cache's listener.
func (p *process) addServices(ctx context.Context, s *system, roles []string, version string) error {
	cfg, log := s.cfg, s.log
	deps := httpx.Deps{App: s.app, Version: version, Logger: log, Metrics: httpx.NewMetrics(s.registry), Gatherer: s.registry,
		BodyTimeout: cfg.BodyTimeout, Tracer: s.traces.Tracer()}
	var err error
	if deps.TrustedProxies, err = httpx.ParseTrustedProxies(cfg.TrustedProxies); err != nil {
		return fmt.Errorf("ARR_TRUSTED_PROXIES: %w", err)
	}
	logTrustedProxies(log, roles, deps.TrustedProxies)
	qs, err := openQuotas(ctx, cfg, s, log, s.now)
	if err != nil {
		return err
	}
	p.closers = append(p.closers, qs.close)
	deps.Quota, deps.Meter = qs.quota, qs.meter
	var bases []any // one log line names every service's link base
	for _, r := range roles {
		if r == "projections" {
			continue
		}
		base, err := p.addServer(r, deps, cfg, log)
		if err != nil {
			return err
		}
		bases = append(bases, slog.String(r, base))
		p.bases[r] = base
	}
	logLinkBases(cfg, log, bases)
	p.group.Add(lifecycle.Recorders, lifecycle.Component{Name: "usage meter", Run: quiet(qs.meter.Run)})
	if qs.cleanup != nil {
		p.group.Add(lifecycle.Intake, lifecycle.Component{Name: "quota cleanup", Run: quiet(qs.cleanup)})
	}
	if s.ledger != nil && slices.Contains(roles, "gateway") {
		p.group.Add(lifecycle.Intake, lifecycle.Component{Name: "spend counters cleanup", Run: quiet(s.ledger.Run)})
	}
	if s.guard != nil && slices.Contains(roles, "gateway") {
		p.group.Add(lifecycle.Intake, lifecycle.Component{Name: "spend lease renewal", Run: quiet(s.guard.Run)})
	}
	if cfg.KeyCache == "true" {
		p.group.Add(lifecycle.Intake, lifecycle.Func("key cache listener", func(ctx context.Context) {
			s.app.Queries.Identities.ListenForChanges(ctx, log.Warn)
		}))
	}
	return nil
}

// addServer listens for role and adds its server; it returns the base URL
// the service builds its links on.
func (p *process) addServer(role string, deps httpx.Deps, cfg Config, log *slog.Logger) (string, error) {
	addr := map[string]string{"answer": cfg.AnswerAddr, "gateway": cfg.GatewayAddr, "records": cfg.RecordsAddr}[role]
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("%s service: listening on %s: %w", role, addr, err)
	}
	p.closers = append(p.closers, func() { _ = ln.Close() })
	if deps.Site, err = cfg.site(role, listenAddr(addr, ln.Addr()), log); err != nil {
		return "", err
	}
	var h http.Handler
	switch role {
	case "answer":
		h, err = answerapi.New(deps)
	case "gateway":
		h, err = gateway.New(deps, gateway.Options{AuditorKey: cfg.AuditorKey, AdminKey: cfg.AdminKey,
			BodyBytes: int64(cfg.BodiesMB) << 20, AccountBodyBytes: int64(cfg.AccountBodiesMB) << 20, BodyWait: cfg.BodyWait})
	case "records":
		h, err = recordsapi.New(deps)
	}
	if err != nil {
		return "", fmt.Errorf("%s: %w", role, err)
	}
	// No ReadTimeout: it would cut off streams and long answers (net/http
	// cancels a request whose connection read times out, even after the
	// body), and answer a slow body with an error of its own. The engine
	// gives each body ARR_BODY_TIMEOUT instead (408 in JSON).
	srv := &http.Server{
		Handler: h, ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout: 120 * time.Second, MaxHeaderBytes: httpx.ServerMaxHeaderBytes, // the engine answers 431 itself, in JSON
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	p.group.Add(lifecycle.Intake, lifecycle.Server(role+" service", srv, ln))
	p.urls[role] = "http://" + ln.Addr().String()
	log.Info(role+" service listening", "url", p.urls[role])
	return deps.Site.BaseURL(), nil
}

// logLinkBases says which base URLs the services build their links on.
func logLinkBases(cfg Config, log *slog.Logger, bases []any) {
	if len(bases) == 0 {
		return
	}
	from := "ARR_PUBLIC_BASE_URL"
	if cfg.PublicBaseURL == "" {
		from = "the listen addresses (ARR_PUBLIC_BASE_URL is unset)"
	}
	log.Info("links in mail and billing return URLs start with these base URLs, from "+from+"; sign-in and billing requests to other hosts get 421", bases...)
	if len(bases) > 1 && cfg.PublicBaseURL != "" && !strings.Contains(cfg.PublicBaseURL, "{service}") {
		log.Warn("ARR_PUBLIC_BASE_URL has no {service}: every service in this process builds its links on the same address, so all but one link to the wrong service; use e.g. https://{service}.arr.example")
	}
}

// addPprof serves the Go profiles on addr.
func (p *process) addPprof(addr string, log *slog.Logger) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("profiling listener on %s: %w", addr, err)
	}
	p.closers = append(p.closers, func() { _ = ln.Close() })
	srv := &http.Server{Handler: pprofMux(), ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	p.group.Add(lifecycle.Intake, lifecycle.Server("profiling", srv, ln))
	log.Warn("Go profiling endpoints listening (ARR_PPROF_ADDR); keep them off public interfaces", "url", "http://"+ln.Addr().String()+"/debug/pprof/")
	return nil
}

// quiet is a loop that retries on its own and whose error at the end is
// only its context's: it never stops the process.
func quiet(run func(context.Context) error) func(context.Context) error {
	return func(ctx context.Context) error { _ = run(ctx); return nil }
}
