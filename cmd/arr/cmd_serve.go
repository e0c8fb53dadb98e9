package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/pprof"
	"net/netip"
	"os"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/spf13/cobra"

	"github.com/arr-dev/arr/cmd/arr/internal/lifecycle"
	"github.com/arr-dev/arr/readapi/app"
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

// serve runs the roles until ctx ends (run).
func (a *cli) serve(ctx context.Context, roles []string) error {
	return run(ctx, a.cfg, a.cfg.logger(), roles, a.version, runHooks{terminal: terminalOf(os.Stdout)})
}

// runHooks are what the caller of run may watch the process by: started
// is called with the services' URLs and the application once they listen;
// terminal, when not nil, gets the ready message of arr up (announceReady).
type runHooks struct {
	started  func(map[string]string, app.Application)
	terminal io.Writer
}

// run is an arr process: it builds the application for roles (the
// composition root, buildApplication) and the process's components for
// them (newProcess), calls hooks.started, if set, with the services' URLs
// and the application, and runs until ctx ends; arr up also says when it
// is ready (announceReady). Then it stops the components
// in order (package lifecycle): the HTTP servers stop accepting and finish
// in-flight requests and projections finish the batch in hand; then the
// recorders (usage meter, served answers, audit chain) flush what the
// drain still gave them; all within ARR_SHUTDOWN_GRACE. `arr up`, `arr
// serve ROLE` and the component tests run it.
func run(ctx context.Context, cfg Config, log *slog.Logger, roles []string, version string, hooks runHooks) error {
	gin.SetMode(gin.ReleaseMode)
	o := serveOptions(roles)
	o.version = version
	s, err := openSystem(ctx, cfg, log, o)
	if err != nil {
		return err
	}
	defer s.Close()
	up := len(roles) == len(roleNames())
	if up && cfg.DemoData == "true" {
		if err := loadDemo(ctx, s, log); err != nil {
			return err
		}
	}
	p, err := newProcess(ctx, s, roles, version)
	if err != nil {
		return err
	}
	defer p.close()
	if up {
		r := readiness{bases: p.bases, self: selfName(), sameEnv: cfg.DatabaseURL != "" || cfg.DataDir != defaultDataDir,
			upstream: s.chatUpstreams > 0}
		p.group.Add(lifecycle.Intake, lifecycle.Func("ready message", func(ctx context.Context) {
			s.announceReady(ctx, p.seeded, r, hooks.terminal)
		}))
	}
	if hooks.started != nil {
		hooks.started(p.urls, s.app)
	}
	err = p.group.Run(ctx)
	if p.group.Expired() {
		s.hurry = true
		log.Warn("ARR_SHUTDOWN_GRACE is over: stopping without waiting further for the store (usage counts not yet appended are lost; completions not yet recorded were not answered)", "grace", cfg.ShutdownGrace)
	} else if err == nil {
		log.Info("stopped")
	}
	return err
}

// serveOptions opens the system for roles. Each role's keys are checked
// against the database at start: the records master key (records), the
// audit hash key (gateway), the log's signing key (projections, which
// signs heads).
func serveOptions(roles []string) openOptions {
	by := "arr up"
	if len(roles) < len(roleNames()) {
		by = "arr serve " + strings.Join(roles, ",")
	}
	return openOptions{setup: true, by: by, roles: roles, contactKeys: slices.Contains(roles, "records"),
		auditKey: slices.Contains(roles, "gateway"), signingKey: slices.Contains(roles, "projections")}
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
