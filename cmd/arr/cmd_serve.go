package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/arr-dev/arr/adapters/datakeys"
	"github.com/arr-dev/arr/adapters/demodata"
	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/eventstore/fanout"
	"github.com/arr-dev/arr/eventstore/signedlog"
	"github.com/arr-dev/arr/projections/logproofs"
	"github.com/arr-dev/arr/readapi/gateway"
	"github.com/arr-dev/arr/readapi/httpx"
	"github.com/arr-dev/arr/readapi/records"
)

func roleNames() []string { return []string{"answer", "gateway", "records", "projections"} }

func (a *cli) upCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "up",
		Short: "Run everything in one process: migrations, projections and the three services",
		Long: "Run everything in one process: migrations, projections and the three HTTP services.\n" +
			"With no DATABASE_URL, a private PostgreSQL is started under ARR_DATA_DIR from the PostgreSQL binaries on this machine.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.serve(cmd.Context(), roleNames())
		},
	}
}

func (a *cli) serveCmd() *cobra.Command {
	return &cobra.Command{
		Use:       "serve answer|gateway|records|projections",
		Short:     "Run one role, so several processes can share one database",
		Args:      cobra.ExactArgs(1),
		ValidArgs: roleNames(),
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, r := range roleNames() {
				if r == args[0] {
					return a.serve(cmd.Context(), []string{r})
				}
			}
			return fmt.Errorf("unknown role %q: use one of answer, gateway, records, projections", args[0])
		},
	}
}

// serve runs the roles until ctx ends, then drains: HTTP servers stop
// accepting and finish in-flight requests (bounded by ARR_SHUTDOWN_GRACE),
// projections finish the batch in hand.
func (a *cli) serve(ctx context.Context, roles []string) error {
	log := a.cfg.logger()
	gin.SetMode(gin.ReleaseMode)
	// Each role's keys are checked against the database at start: the
	// records master key (records), the audit hash key (gateway), the
	// log's signing key (projections, which signs heads).
	by := "arr up"
	if len(roles) < len(roleNames()) {
		by = "arr serve " + strings.Join(roles, ",")
	}
	s, err := openSystem(ctx, a.cfg, log, openOptions{setup: true, by: by, contactKeys: slices.Contains(roles, "records"),
		auditKey: slices.Contains(roles, "gateway"), signingKey: slices.Contains(roles, "projections")})
	if err != nil {
		return err
	}
	defer s.Close()
	if len(roles) == len(roleNames()) && a.cfg.DemoData == "true" { // arr up
		if err := loadDemo(ctx, s, log); err != nil {
			return err
		}
	}

	deps := httpx.Deps{
		App: s.app, WaitFor: s.waitFor, Now: s.now, Head: s.store.Head, Version: a.version,
		Logger: log, Metrics: httpx.NewMetrics(s.registry), Gatherer: s.registry, BodyTimeout: a.cfg.BodyTimeout,
	}
	if deps.Billing, err = openBilling(a.cfg, s, log); err != nil {
		return err
	}
	if deps.Mailer, err = openMailer(a.cfg, log, roles); err != nil {
		return err
	}
	if deps.TrustedProxies, err = httpx.ParseTrustedProxies(a.cfg.TrustedProxies); err != nil {
		return fmt.Errorf("ARR_TRUSTED_PROXIES: %w", err)
	}
	logTrustedProxies(log, roles, deps.TrustedProxies)
	qs, err := openQuotas(ctx, a.cfg, s, log, deps.Now)
	if err != nil {
		return err
	}
	defer qs.close()
	deps.Quota, deps.Meter = qs.quota, qs.meter
	// The bus connection is made before any listener opens, so a bad
	// ARR_BUS fails the start cleanly.
	var fwd *fanout.Forwarder
	if slices.Contains(roles, "projections") && a.cfg.Bus != fanout.BusNone {
		pub, closePub, err := fanout.NewPublisher(a.cfg.Bus, a.cfg.NATSURL, log)
		if err != nil {
			return fmt.Errorf("event bus %s: %w", a.cfg.Bus, err)
		}
		defer closePub() //nolint:errcheck // runs after every goroutine has returned
		if fwd, err = fanout.NewForwarder(s.pool, s.store, pub, fanout.Config{Name: "bus", Logger: log, Registerer: s.registry}); err != nil {
			return err
		}
	}
	var ans *answerRole
	if slices.Contains(roles, "answer") {
		if ans, err = openAnswer(a.cfg, s, log); err != nil {
			return fmt.Errorf("answer: %w", err)
		}
	}
	var gwRouting gateway.Routing
	var chain *commands.AuditChain
	if slices.Contains(roles, "gateway") {
		if gwRouting, chain, err = openGatewayRouting(a.cfg, s, log); err != nil {
			return err
		}
		if p, err := s.logProver(); err != nil {
			return err
		} else if p != nil {
			gwRouting.Log = logproofs.New(p)
		}
	}
	// The projections role also signs the log's tree heads.
	var signer *signedlog.Signer
	if slices.Contains(roles, "projections") {
		if signer, err = s.logSigner(log); errors.Is(err, eventstore.ErrNoMerkleTree) {
			log.Warn("no signed tree heads: " + err.Error())
		} else if err != nil {
			return fmt.Errorf("the event log's signer: %w", err)
		} else {
			log.Info("signing the event log's tree heads", "origin", a.cfg.LogOrigin, "verifier_key", signer.VerifierKey(),
				"every_events", a.cfg.LogCheckpointEvery, "every", a.cfg.LogCheckpointTime)
		}
	}
	builders := map[string]struct {
		addr string
		new  func(httpx.Deps) (http.Handler, error)
	}{
		"answer":  {a.cfg.AnswerAddr, func(d httpx.Deps) (http.Handler, error) { return ans.pipeline.New(d) }},
		"gateway": {a.cfg.GatewayAddr, func(d httpx.Deps) (http.Handler, error) { return gateway.NewWithRouting(d, gwRouting) }},
		"records": {a.cfg.RecordsAddr, func(d httpx.Deps) (http.Handler, error) {
			gaz, err := demodata.LoadGazetteer()
			if err != nil {
				return nil, fmt.Errorf("records: %w", err)
			}
			return records.NewServer(d, records.Options{ContactKeys: contactKeys{s.keys}, Gazetteer: gaz})
		}},
	}
	var servers []*http.Server
	var listeners []net.Listener
	closeListeners := func() {
		for _, l := range listeners {
			_ = l.Close()
		}
	}
	var bases []any // one log line names every service's link base
	for _, r := range roles {
		b, ok := builders[r]
		if !ok {
			continue
		}
		ln, err := net.Listen("tcp", b.addr)
		if err != nil {
			closeListeners()
			return fmt.Errorf("%s service: listening on %s: %w", r, b.addr, err)
		}
		listeners = append(listeners, ln)
		d := deps
		if d.Site, err = a.cfg.site(r, listenAddr(b.addr, ln.Addr()), log); err != nil {
			closeListeners()
			return err
		}
		h, err := b.new(d)
		if err != nil {
			closeListeners()
			return fmt.Errorf("%s: %w", r, err)
		}
		bases = append(bases, slog.String(r, d.Site.BaseURL()))
		// No ReadTimeout: it would cut off streams and long answers (net/http
		// cancels a request whose connection read times out, even after the
		// body), and answer a slow body with an error of its own. The
		// engine gives each body ARR_BODY_TIMEOUT instead (408 in JSON).
		servers = append(servers, &http.Server{
			Handler: h, ReadHeaderTimeout: 10 * time.Second,
			IdleTimeout: 120 * time.Second, MaxHeaderBytes: httpx.ServerMaxHeaderBytes, // the engine answers 431 itself, in JSON
			ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		})
		log.Info(r+" service listening", "url", "http://"+ln.Addr().String())
	}
	if len(bases) > 0 {
		from := "ARR_PUBLIC_BASE_URL"
		if a.cfg.PublicBaseURL == "" {
			from = "the listen addresses (ARR_PUBLIC_BASE_URL is unset)"
		}
		log.Info("links in mail and billing return URLs start with these base URLs, from "+from+"; sign-in and billing requests to other hosts get 421", bases...)
		if len(bases) > 1 && a.cfg.PublicBaseURL != "" && !strings.Contains(a.cfg.PublicBaseURL, "{service}") {
			log.Warn("ARR_PUBLIC_BASE_URL has no {service}: every service in this process builds its links on the same address, so all but one link to the wrong service; use e.g. https://{service}.arr.example")
		}
	}

	services := len(servers)
	if a.cfg.PprofAddr != "" {
		ln, err := net.Listen("tcp", a.cfg.PprofAddr)
		if err != nil {
			closeListeners()
			return fmt.Errorf("profiling listener on %s: %w", a.cfg.PprofAddr, err)
		}
		listeners = append(listeners, ln)
		servers = append(servers, &http.Server{Handler: pprofMux(), ReadHeaderTimeout: 10 * time.Second,
			ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)})
		log.Warn("Go profiling endpoints listening (ARR_PPROF_ADDR); keep them off public interfaces", "url", "http://"+ln.Addr().String()+"/debug/pprof/")
	}

	var wg sync.WaitGroup
	errc := make(chan error, len(servers)+2)
	for i, srv := range servers {
		wg.Add(1)
		go func(srv *http.Server, ln net.Listener) {
			defer wg.Done()
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errc <- err
			}
		}(srv, listeners[i])
	}
	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	meterCtx, stopMeter := context.WithCancel(context.WithoutCancel(ctx))
	defer stopMeter()
	if services > 0 {
		qs.start(runCtx, meterCtx, &wg)
		if a.cfg.KeyCache == "true" {
			wg.Add(1)
			go func() { defer wg.Done(); s.app.Queries.Identities.ListenForChanges(runCtx, log.Warn) }()
		}
	}
	if ans != nil {
		ans.start(runCtx, meterCtx, &wg, a.cfg, log)
	}
	if chain != nil {
		// Like the meter, the audit chain outlives the HTTP drain, so
		// completions served during shutdown are recorded. Its context
		// ends when the drain is over or ARR_SHUTDOWN_GRACE has passed,
		// and Run returns at once then (entries not yet appended fail).
		wg.Add(1)
		go func() { defer wg.Done(); _ = chain.Run(meterCtx) }()
	}
	if slices.Contains(roles, "projections") {
		wg.Add(1)
		go func() {
			defer wg.Done()
			log.Info("projections running", "projections", len(s.runner.Projections()))
			if err := s.runner.Run(runCtx); err != nil {
				errc <- err
			}
		}()
		// SQL projections defined or dropped while arr runs.
		wg.Add(1)
		go func() { defer wg.Done(); s.sql.Watch(runCtx, s.runner, time.Second) }()
		if signer != nil {
			wg.Add(1)
			go func() { defer wg.Done(); _ = signer.Run(runCtx) }()
		}
		if fwd != nil {
			wg.Add(1)
			go func() {
				defer wg.Done()
				log.Info("publishing every event to the bus", "bus", a.cfg.Bus, "topic", fanout.DefaultTopic)
				if err := fwd.Run(runCtx); err != nil {
					errc <- fmt.Errorf("fan-out: %w", err)
				}
			}()
		}
	}

	select {
	case <-ctx.Done():
		log.Info("shutting down: draining in-flight requests and finishing the current batch")
	case err = <-errc:
		log.Error("a role failed; shutting down", "err", err)
	}
	stopRun()
	grace, cancel := context.WithTimeout(context.Background(), a.cfg.ShutdownGrace)
	defer cancel()
	for _, srv := range servers {
		if e := srv.Shutdown(grace); e != nil {
			log.Warn("HTTP shutdown", "err", e)
		}
	}
	stopMeter()
	// The meters' last flush and the projections' current batch get what
	// is left of ARR_SHUTDOWN_GRACE, no more: a store that does not answer
	// cannot hold the process past it.
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		log.Info("stopped")
	case <-grace.Done():
		s.hurry = true
		log.Warn("ARR_SHUTDOWN_GRACE is over: stopping without waiting further for the store (usage counts not yet appended are lost; completions not yet recorded were not answered)", "grace", a.cfg.ShutdownGrace)
	}
	return err
}

// logTrustedProxies says whose forwarding headers the services believe, and
// warns when that is every peer.
func logTrustedProxies(log *slog.Logger, roles []string, trusted []netip.Prefix) {
	if !slices.ContainsFunc(roles, func(r string) bool { return r != "projections" }) || len(trusted) == 0 {
		return
	}
	var list []string
	for _, p := range trusted {
		if p.Bits() == 0 {
			log.Warn("ARR_TRUSTED_PROXIES contains "+p.String()+": every peer may set X-Forwarded-For, X-Forwarded-Proto and X-Forwarded-Host; list only the proxies in front of arr unless no client can reach arr directly", "prefix", p.String())
		}
		list = append(list, p.String())
	}
	log.Info("forwarding headers are believed only from the trusted proxies (ARR_TRUSTED_PROXIES)", "proxies", strings.Join(list, ","))
}

// pprofMux serves the Go runtime profiles of net/http/pprof.
func pprofMux() *http.ServeMux {
	m := http.NewServeMux()
	m.HandleFunc("/debug/pprof/", pprof.Index)
	m.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	m.HandleFunc("/debug/pprof/profile", pprof.Profile)
	m.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	m.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return m
}

// contactKeys gives the records service the data-key ring as
// records.ContactKeys; with no ring it opens nothing.
type contactKeys struct{ kr *datakeys.Keyring }

func (k contactKeys) Opener(ctx context.Context, account uuid.UUID) (records.ContactOpener, error) {
	if k.kr == nil {
		return nil, errors.New("no data-key ring")
	}
	return k.kr.Opener(ctx, account)
}
