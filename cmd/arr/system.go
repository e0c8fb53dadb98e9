package main

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/arr-dev/arr/adapters/datakeys"
	"github.com/arr-dev/arr/adapters/replica"
	"github.com/arr-dev/arr/adapters/tracing"
	"github.com/arr-dev/arr/commands/research"
	"github.com/arr-dev/arr/domain/audit"
	"github.com/arr-dev/arr/projections/builtin"
	"github.com/arr-dev/arr/projections/identity"
	"github.com/arr-dev/arr/readapi/answerapi"
	"github.com/arr-dev/arr/readapi/app"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/spf13/cobra"

	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/commands/spend"
	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/eventstore/kurrentdb"
	"github.com/arr-dev/arr/eventstore/postgres"
	"github.com/arr-dev/arr/migrations"
	"github.com/arr-dev/arr/projections"
	"github.com/arr-dev/arr/projections/sqlproj"
)

// system is arr wired together: the database, the event store, the
// projections, the commands and the read-model queries. Every subcommand
// builds one with openSystem; the end-to-end tests drive the same code
// through the binary.
type system struct {
	cfg  Config
	log  *slog.Logger
	pool *pgxpool.Pool
	// admission is the small pool of admission (key look-ups, quota
	// counters, /healthz's database check): its own connections, so that
	// requests whose queries are slow cannot make admission wait for one.
	admission *pgxpool.Pool
	// replica routes the read models' queries to ARR_READ_DATABASE_URL;
	// nil without one.
	replica *replica.Router
	store   eventstore.Store
	runner  *projections.Runner
	// app is the application every service and subcommand calls.
	app app.Application
	// keys is the data-key ring of imported lists' contact columns (only
	// with openOptions.contactKeys).
	keys *datakeys.Keyring
	// cursorKey authenticates the records service's cursors, derived
	// from the records master key (with openOptions.contactKeys).
	cursorKey []byte
	// auditKey and signingKey are the gateway's audit hash key (with
	// openOptions.auditKey) and the log's signing key (with
	// openOptions.signingKey), both bound to the database (bindKeys).
	auditKey   audit.HashKey
	signingKey ed25519.PrivateKey
	// sql runs analysts' SQL projections; the runner holds those defined.
	sql      *sqlproj.Engine
	registry *prometheus.Registry
	closers  []func()
	// The long-running halves of the application's role parts, which the
	// process's lifecycle runs (components): the gateway's audit chain, the
	// answer service's served-answers recorder and local index (nil for web
	// search), and its language model (nil: extractive answers).
	chain *commands.AuditChain
	// ledger reads and cleans the keys' spend counters, guard enforces
	// the keys' limits on every route that spends (commands/spend; the
	// gateway role).
	ledger *spend.Ledger
	guard  *spend.Guard
	// chatUpstreams counts the catalog's chat models that have an
	// upstream configured (the gateway role): none, and every completion
	// is 502.
	chatUpstreams int
	served        *answerapi.Served
	answerModel   research.Model
	// traces is the tracer provider of a serving process; nil: traces off
	// (its Tracer is nil, and nothing starts a span).
	traces *tracing.Provider
	// now is the clock of commands and services (ARR_TEST_CLOCK_FILE moves it).
	now func() time.Time
	// hurry is set when the shutdown grace is over: Close no longer waits
	// for connections still in use.
	hurry bool
}

type openOptions struct {
	// setup creates missing read models (and rebuilds ones whose DDL
	// changed); servers and runners want it, quick CLI reads do not.
	setup bool
	// catchUp names read models to bring up to the log head before use
	// (implies setup).
	catchUp []string
	// contactKeys loads the data-key ring (the records master key), for
	// the commands that seal, open and destroy lists' contact data.
	contactKeys bool
	// auditKey loads the gateway's audit hash key; signingKey the event
	// log's signing key (PostgreSQL store only).
	auditKey, signingKey bool
	// by names the command in the key records (default: arr).
	by string
	// roles are the services and workers the process runs (arr up, arr
	// serve ROLE; none for a CLI command): the application is built with
	// the parts they use.
	roles []string
	// version is arr's version, for the traces' service.version.
	version string
}

// open builds the system for a CLI command.
func (a *cli) open(cmd *cobra.Command, o openOptions) (*system, error) {
	if o.by == "" {
		o.by = cmd.CommandPath()
	}
	return openSystem(cmd.Context(), a.cfg, a.cfg.logger(), o)
}

func openSystem(ctx context.Context, cfg Config, log *slog.Logger, o openOptions) (*system, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &system{cfg: cfg, log: log, registry: prometheus.NewRegistry(), now: cfg.clock()}
	s.registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	ok := false
	defer func() {
		if !ok {
			s.Close()
		}
	}()
	url, err := s.databaseURL(ctx, len(o.roles) > 0)
	if err != nil {
		return nil, err
	}
	if err := s.openPool(ctx, url); err != nil {
		return nil, err
	}
	if err := s.openReplica(ctx); err != nil {
		return nil, err
	}
	if err := checkExtensions(ctx, s.pool); err != nil {
		return nil, err
	}
	if err := migrations.Apply(ctx, s.pool, log); err != nil {
		return nil, err
	}
	if err := s.openStore(ctx); err != nil {
		return nil, err
	}
	// The keys this command uses are checked at start, before any work.
	if err := s.bindKeys(ctx, o); err != nil {
		return nil, err
	}
	if err := s.openTraces(ctx, o); err != nil {
		return nil, err
	}
	if err := s.openProjections(ctx, o.setup || len(o.catchUp) > 0); err != nil {
		return nil, err
	}
	if s.app, err = s.buildApplication(ctx, o); err != nil {
		return nil, err
	}
	for _, name := range o.catchUp {
		if err := s.catchUp(ctx, name); err != nil {
			return nil, err
		}
	}
	ok = true
	return s, nil
}

// databaseURL is DATABASE_URL, or with none the embedded PostgreSQL's,
// started now if it is not running. A serving process says which it
// uses; a CLI command only when it started the server itself (a command
// run beside arr up would print it on every run).
func (s *system) databaseURL(ctx context.Context, serving bool) (string, error) {
	if s.cfg.DatabaseURL != "" {
		return s.cfg.DatabaseURL, nil
	}
	pg, err := newEmbeddedPG(s.cfg.DataDir, s.cfg.EmbeddedPort, s.log)
	if err != nil {
		return "", err
	}
	started, err := pg.Start(ctx)
	if started {
		s.closers = append(s.closers, func() {
			if err := pg.Stop(); err != nil {
				s.log.Warn("stopping the embedded PostgreSQL", "err", err)
			}
		})
	}
	if err != nil {
		return "", err
	}
	level := slog.LevelDebug
	if serving || started {
		level = slog.LevelInfo
	}
	s.log.Log(ctx, level, "no DATABASE_URL set: using the embedded PostgreSQL", "dir", pg.dir, "addr", fmt.Sprintf("127.0.0.1:%d", s.cfg.EmbeddedPort), "started_now", started)
	return pg.URL(), nil
}

// openPool connects to PostgreSQL at url.
func (s *system) openPool(ctx context.Context, url string) error {
	pcfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return fmt.Errorf("DATABASE_URL: %w", err)
	}
	if err := poolSize(pcfg, url, "DATABASE_URL"); err != nil {
		return err
	}
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return fmt.Errorf("connecting to PostgreSQL: %w", err)
	}
	s.pool = pool
	s.closers = append(s.closers, func() {
		// pgxpool.Close waits for every connection in use; after
		// ARR_SHUTDOWN_GRACE (hurry) the process leaves them to the
		// server, which rolls back what they had not committed.
		done := make(chan struct{})
		go func() { pool.Close(); close(done) }()
		if s.hurry {
			return
		}
		<-done
	})
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := pool.Ping(pingCtx); err != nil {
		return fmt.Errorf("connecting to PostgreSQL at %s:%d: %w", pcfg.ConnConfig.Host, pcfg.ConnConfig.Port, err)
	}
	return s.openAdmission(ctx, pcfg)
}

// Admission's pool: admissionPoolConns connections of its own, each of
// whose statements the server stops after admissionStatementTimeout (a
// key look-up or a quota count takes milliseconds).
const (
	admissionPoolConns        = 4
	admissionStatementTimeout = 5 * time.Second
)

// openAdmission opens the admission pool, on the same server and
// credentials as the main pool (pcfg).
func (s *system) openAdmission(ctx context.Context, pcfg *pgxpool.Config) error {
	acfg := pcfg.Copy()
	acfg.MaxConns, acfg.MinConns = admissionPoolConns, 0
	acfg.ConnConfig.RuntimeParams["statement_timeout"] = strconv.FormatInt(admissionStatementTimeout.Milliseconds(), 10)
	acfg.ConnConfig.RuntimeParams["application_name"] = "arr admission"
	pool, err := pgxpool.NewWithConfig(ctx, acfg)
	if err != nil {
		return fmt.Errorf("connecting the admission pool to PostgreSQL: %w", err)
	}
	s.admission = pool
	s.closers = append(s.closers, func() {
		done := make(chan struct{})
		go func() { pool.Close(); close(done) }()
		if !s.hurry {
			<-done
		}
	})
	return nil
}

// openStore opens the event store ARR_EVENTSTORE names.
func (s *system) openStore(ctx context.Context) error {
	switch s.cfg.EventStore {
	case "postgres":
		st, err := postgres.New(s.pool, postgres.Config{Logger: s.log})
		if err != nil {
			return err
		}
		s.store = st
		// Events the log's Merkle tree lacks (from before it existed) are
		// added now rather than on the first append. If that fails the
		// log was altered: appends fail with the same error, while reads
		// and `arr events verify` (which names what changed) still work.
		if err := st.CatchUpTree(ctx); err != nil {
			s.log.Error("the event log's Merkle tree cannot be extended; appends will fail", "err", err)
		}
	case "kurrentdb":
		st, err := kurrentdb.New(kurrentdb.Config{URL: s.cfg.KurrentDBURL, Logger: s.log})
		if err != nil {
			return fmt.Errorf("KurrentDB event store: %w", err)
		}
		s.store = st
		s.log.Info("event store: KurrentDB (read models and checkpoints stay in PostgreSQL)")
	default:
		return errors.New("ARR_EVENTSTORE=" + s.cfg.EventStore + " is not available in this build")
	}
	s.closers = append(s.closers, func() {
		// The store finishes the append in hand before it closes; after
		// ARR_SHUTDOWN_GRACE (hurry) the append in hand is cancelled at
		// the server (a second at most), so it cannot commit after the
		// process has gone, or, with another store, left to it.
		if pg, ok := s.store.(*postgres.Store); ok && s.hurry {
			pg.Abort(time.Second)
			return
		}
		if s.hurry {
			go func() { _ = s.store.Close() }()
			return
		}
		_ = s.store.Close()
	})
	return nil
}

// openProjections builds the runner of the built-in projections and the
// analysts' SQL projections; with setup it creates missing read models
// (and rebuilds ones whose DDL changed) first.
func (s *system) openProjections(ctx context.Context, setup bool) error {
	cfg := s.cfg
	var err error
	s.runner, err = projections.NewRunner(s.pool, s.store, projections.Config{Logger: s.log, Registerer: s.registry, BatchSize: cfg.BatchSize, BatchTimeout: cfg.BatchTimeout}, append(builtin.All(), sqlproj.Definitions{})...)
	if err != nil {
		return err
	}
	if s.sql, err = sqlproj.Open(ctx, s.pool, sqlproj.Config{StatementTimeout: cfg.SQLTimeout,
		TempFileLimit: int64(cfg.SQLTempFileMB) << 20, WorkMem: int64(cfg.SQLWorkMemMB) << 20, MaxBytes: int64(cfg.SQLMaxMB) << 20, Logger: s.log}); err != nil {
		return err
	}
	s.closers = append(s.closers, s.sql.Close)
	if setup {
		// Roles of SQL projections whose database is gone, and check
		// roles a crash left, go (sqlproj.Sweep).
		dropped, err := s.sql.Sweep(ctx)
		if len(dropped) > 0 {
			s.log.Info("SQL projections: dropped roles nothing needs any more", "roles", dropped)
		}
		if err != nil {
			s.log.Warn("SQL projections: could not drop every role nothing needs any more", "err", err)
		}
		if err := s.runner.Setup(ctx); err != nil {
			return err
		}
		if err := s.catchUp(ctx, sqlproj.DefinitionsName); err != nil {
			return err
		}
	}
	// The analysts' SQL projections defined now join the built-ins.
	if _, err := s.sql.Sync(ctx, s.runner, setup); err != nil {
		s.log.Error("SQL projections: not every definition could be loaded", "err", err)
	}
	return nil
}

// Close releases everything in reverse order of acquisition.
func (s *system) Close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
	s.closers = nil
}

// waitFor gives read-your-writes: it returns once the projection has applied
// position pos, bounded by ARR_READ_YOUR_WRITES_TIMEOUT.
func (s *system) waitFor(ctx context.Context, projection string, pos uint64) error {
	if pos == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.RYWTimeout)
	defer cancel()
	if err := s.runner.WaitFor(ctx, projection, pos); err != nil {
		return err
	}
	if s.replica != nil {
		// The replica too, or reads go to the primary until it is there.
		if err := s.replica.AwaitReplay(ctx); err != nil {
			return err
		}
	}
	if projection == identity.Name {
		// The write is in the read model: no principal cached from
		// before it may answer this process's next request.
		s.app.Queries.Identities.Forget()
	}
	return nil
}

// catchUp brings a projection up to the current log head.
func (s *system) catchUp(ctx context.Context, projection string) error {
	head, err := s.store.Head(ctx)
	if err != nil {
		return err
	}
	return s.waitFor(ctx, projection, head)
}

// Connection pool sizes: the size arr uses when DATABASE_URL names none,
// and the least it runs with (projections, the audit chain, the quota
// counters and requests share the pool).
const (
	defaultPoolConns = 16
	minPoolConns     = 4
)

// poolSize sizes the pool: an operator's pool_max_conns in DATABASE_URL
// is kept as given (one below minPoolConns is a configuration error, not
// silently raised); without one, arr uses defaultPoolConns.
func poolSize(pcfg *pgxpool.Config, url, env string) error {
	if !strings.Contains(url, "pool_max_conns") {
		pcfg.MaxConns = defaultPoolConns
		return nil
	}
	if pcfg.MaxConns < minPoolConns {
		return ConfigErrors{&configError{env: env, value: fmt.Sprintf("…pool_max_conns=%d…", pcfg.MaxConns),
			want: fmt.Sprintf("pool_max_conns of at least %d (or none: arr then uses %d)", minPoolConns, defaultPoolConns)}}
	}
	return nil
}
