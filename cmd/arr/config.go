package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/pflag"

	"github.com/arr-dev/arr/adapters/secretkey"
	"github.com/arr-dev/arr/eventstore/transparency"
	"github.com/arr-dev/arr/eventstore/transparency/verifier"
	"github.com/arr-dev/arr/readapi/httpx"
)

// defaultDataDir is ARR_DATA_DIR's default: .arr in the working directory.
const defaultDataDir = ".arr"

// Config is everything arr reads from its environment. Each field is an
// environment variable and a flag of the same name (DATABASE_URL is
// --database-url); a flag wins over the variable, the variable over the
// default. Only this package reads the environment.
type Config struct {
	DatabaseURL   string
	DataDir       string
	EmbeddedPort  int
	EventStore    string
	KurrentDBURL  string
	Bus           string
	NATSURL       string
	AnswerAddr    string
	GatewayAddr   string
	RecordsAddr   string
	LogLevel      string
	LogFormat     string
	ShutdownGrace time.Duration
	RYWTimeout    time.Duration
	// BodyTimeout is how long a request body may take to arrive (408
	// after it).
	BodyTimeout  time.Duration
	BatchSize    int
	BatchTimeout time.Duration
	// SQLTimeout bounds each statement batch, DDL statement and query of
	// an analyst's SQL projection.
	SQLTimeout time.Duration
	// SQLTempFileMB and SQLWorkMemMB bound the temporary files and the
	// per-sort memory of each call into analysts' SQL.
	SQLTempFileMB int
	SQLWorkMemMB  int
	// SQLMaxMB bounds the tables of each analyst's SQL projection.
	SQLMaxMB    int
	RedisURL    string
	PublicLimit int

	// Stripe and the operator's admin key (secrets: never logged or shown).
	StripeAPIKey        string
	StripeAPIBase       string
	StripeWebhookSecret string
	AdminKey            string

	// Mail and the links in it (SMTPURL may hold a password: never shown).
	SMTPURL       string
	MailFrom      string
	PublicBaseURL string
	// TrustedProxies: the peers whose X-Forwarded-* headers are believed.
	TrustedProxies string

	// Answer is the answer service's search, language model and index.
	Answer AnswerConfig
	// Records service: the master key wrapping the per-account data keys
	// (a secret), and whether `arr up` loads the demo data.
	MasterKey string
	DemoData  string
	// The records map page's base map (MapSettings).
	MapBasemapURL, MapAttribution string
	// WebhookPrivate: allow lets monitors' webhooks go to loopback and
	// private addresses.
	WebhookPrivate string
	// MonitorDisableAfter: a monitor whose webhook fails this long is
	// disabled.
	MonitorDisableAfter time.Duration
	// ReadDatabaseURL is a streaming replica the services read the read
	// models from; empty: the primary. ReadMaxLag bounds its staleness.
	ReadDatabaseURL string
	ReadMaxLag      time.Duration
	// KeyCache: "true" authenticates API keys from memory (see
	// identity.Queries.ListenForChanges).
	KeyCache string
	// The gateway's routing (UpstreamAPIKey is a secret: never shown).
	Catalog         string
	ModelAliases    string
	UpstreamBaseURL string
	UpstreamModel   string
	UpstreamAPIKey  string
	UpstreamTimeout time.Duration
	// MaxRequestDuration caps a gateway completion, a stream's included.
	MaxRequestDuration time.Duration
	// BodiesMB and AccountBodiesMB bound the request bodies in flight in
	// a gateway process and per account; BodyWait is how long a request waits
	// for room.
	BodiesMB, AccountBodiesMB int
	BodyWait                  time.Duration
	BreakerFailures           int
	BreakerOpen               time.Duration
	CacheEntries              int
	CacheTTL                  time.Duration
	// The gateway's audit secrets (never logged or shown): the key of the
	// HMAC-SHA-256 request and response hashes in audit entries, and the
	// operator's auditor key that reads every entry's payload.
	AuditHMACKey string
	AuditorKey   string
	// The signed event log: the tree heads' signing key (a secret), the
	// log's origin and how often a head is signed.
	LogSigningKey      string
	LogOrigin          string
	LogCheckpointEvery int
	LogCheckpointTime  time.Duration
	// PprofAddr serves net/http/pprof for operators; empty serves nothing.
	PprofAddr string
	// Traces are the OpenTelemetry settings (OTEL_*).
	Traces TracesConfig

	// raw is each setting's text, from its flag or variable (bind).
	raw map[string]*string
}

type setting struct {
	env, help string
	str       *string
	num       *int
	dur       *time.Duration
	def       string
	secret    bool // its value is never shown as the flag's default
	// choices are the values a string setting accepts; nil: any.
	choices []string
	// min and max bound a number (max 0: none); a duration must be
	// positive unless zeroOK.
	min, max int
	zeroOK   bool
}

// configError is one configuration value arr cannot use: the variable,
// the value given and the form it accepts.
type configError struct {
	env, value, want string
}

func (e *configError) Error() string {
	return fmt.Sprintf("%s=%q (flag --%s): want %s", e.env, e.value, flagName(e.env), e.want)
}

// ConfigErrors are every problem of a configuration; arr prints one line
// each and exits 2.
type ConfigErrors []error

func (es ConfigErrors) Error() string { return errors.Join(es...).Error() }

func (es ConfigErrors) Unwrap() []error { return es }

func (c *Config) settings() []setting {
	return append([]setting{
		{env: "DATABASE_URL", str: &c.DatabaseURL, help: "PostgreSQL (with PostGIS) URL; empty starts a private PostgreSQL under ARR_DATA_DIR"},
		{env: "ARR_READ_DATABASE_URL", str: &c.ReadDatabaseURL, help: "a streaming replica of DATABASE_URL (same users) the services read the read models from while it lags by at most ARR_READ_MAX_LAG (else they read the primary); keys and sessions are always checked on the primary; empty: read the primary"},
		{env: "ARR_READ_MAX_LAG", dur: &c.ReadMaxLag, def: "10s", help: "the most the read replica may lag and still be read"},
		{env: "ARR_DATA_DIR", str: &c.DataDir, def: defaultDataDir, help: "directory for the embedded PostgreSQL and local state"},
		{env: "ARR_EMBEDDED_PG_PORT", num: &c.EmbeddedPort, def: "54329", help: "port of the embedded PostgreSQL (127.0.0.1 only)", min: 1, max: 65535},
		{env: "ARR_EVENTSTORE", str: &c.EventStore, def: "postgres", help: "event store: postgres or kurrentdb", choices: []string{"postgres", "kurrentdb"}},
		{env: "KURRENTDB_URL", str: &c.KurrentDBURL, help: "KurrentDB connection string when ARR_EVENTSTORE=kurrentdb"},
		{env: "ARR_BUS", str: &c.Bus, def: "none", help: "event fan-out: none, gochannel or nats", choices: []string{"none", "gochannel", "nats"}},
		{env: "NATS_URL", str: &c.NATSURL, def: "nats://127.0.0.1:4222", help: "NATS server when ARR_BUS=nats"},
		{env: "ARR_ANSWER_ADDR", str: &c.AnswerAddr, def: "127.0.0.1:8081", help: "listen address of the answer service"},
		{env: "ARR_GATEWAY_ADDR", str: &c.GatewayAddr, def: "127.0.0.1:8082", help: "listen address of the routing gateway"},
		{env: "ARR_RECORDS_ADDR", str: &c.RecordsAddr, def: "127.0.0.1:8083", help: "listen address of the records service"},
		{env: "ARR_LOG_LEVEL", str: &c.LogLevel, def: "info", help: "debug, info, warn or error", choices: []string{"debug", "info", "warn", "error"}},
		{env: "ARR_LOG_FORMAT", str: &c.LogFormat, def: "text", help: "text or json", choices: []string{"text", "json"}},
		{env: "ARR_SHUTDOWN_GRACE", dur: &c.ShutdownGrace, def: "20s", help: "how long SIGINT/SIGTERM waits for in-flight requests"},
		{env: "ARR_READ_YOUR_WRITES_TIMEOUT", dur: &c.RYWTimeout, def: "5s", help: "bound on waiting for read models to show a write"},
		{env: "ARR_BODY_TIMEOUT", dur: &c.BodyTimeout, def: "30s", help: "how long a request body may take to arrive once its headers are in; a slower body is answered 408 request_timeout and not counted against any quota"},
		{env: "ARR_PROJECTION_BATCH_SIZE", num: &c.BatchSize, def: "2000", help: "most events a projection applies per transaction", min: 1, max: 100000},
		{env: "ARR_PROJECTION_BATCH_TIMEOUT", dur: &c.BatchTimeout, def: "60s", help: "time a projection transaction gets; one that runs out is retried with twice the time (up to 1h)"},
		{env: "ARR_SQL_PROJECTION_TIMEOUT", dur: &c.SQLTimeout, def: "30s", help: "statement timeout of analysts' SQL projections: what one batch of events, one DDL statement or one `arr projections query` may take before PostgreSQL cancels it"},
		{env: "ARR_SQL_PROJECTION_TEMP_FILE_MB", num: &c.SQLTempFileMB, def: "256", min: 1, help: "temporary files (MiB) one session of an analyst's SQL projection may write at once (PostgreSQL's temp_file_limit, set on the projection's role when arr sets it up, which the role cannot change); past it PostgreSQL cancels the statement"},
		{env: "ARR_SQL_PROJECTION_MAX_MB", num: &c.SQLMaxMB, def: "1024", min: 1, max: 1 << 30, help: "most disk (MiB) the tables of one analyst's SQL projection may hold (pg_total_relation_size over its schema, measured after every batch and DDL statement); a batch past it is rolled back and the projection stops, with the reason in /healthz, arr projections status and arr_projection_stopped"},
		{env: "ARR_SQL_PROJECTION_WORK_MEM_MB", num: &c.SQLWorkMemMB, def: "16", min: 1, max: 4096, help: "memory (MiB) one sort or hash of an analyst's SQL may use before it spills to temporary files (PostgreSQL's work_mem, set for each call)"},
		{env: "STRIPE_API_KEY", str: &c.StripeAPIKey, secret: true, help: "Stripe secret key; empty turns billing off (checkout and portal answer 503)"},
		{env: "STRIPE_API_BASE", str: &c.StripeAPIBase, def: "https://api.stripe.com", help: "Stripe API base URL (tests point it at stripe-mock)"},
		{env: "STRIPE_WEBHOOK_SECRET", str: &c.StripeWebhookSecret, secret: true, help: "signing secret of the Stripe webhook endpoint POST /v1/stripe/webhook"},
		{env: "ARR_ADMIN_KEY", str: &c.AdminKey, secret: true, help: "operator key (header X-Admin-Key) that bypasses the public checkout's plan checks; empty turns the bypass off"},
		{env: "REDIS_URL", str: &c.RedisURL, help: "Redis for the quota counters (redis://host:6379/0); empty counts in PostgreSQL"},
		{env: "ARR_PUBLIC_RATE_LIMIT", num: &c.PublicLimit, def: "600", help: "requests per clock hour per client IP, without a key, to the records service's public endpoints and the gateway's /v1/log routes (a request with a records key counts against the key instead)", min: 1},
		{env: "SMTP_URL", str: &c.SMTPURL, secret: true, help: "SMTP server for sign-in mail: smtp://user:pass@host:587 (STARTTLS when offered) or smtps://…:465; empty prints each mail to the log instead"},
		{env: "ARR_MAIL_FROM", str: &c.MailFrom, def: "arr <no-reply@arr.localhost>", help: "sender of arr's mail"},
		{env: "ARR_MASTER_KEY", str: &c.MasterKey, secret: true, help: "records service master key (64 hex digits or base64 of 32 bytes) wrapping each account's data key; empty uses ARR_DATA_DIR/master.key, made by the first process when the database names no key. The database records the key's fingerprint: a process with another key, or none, stops at start (exit 2) and makes no key file"},
		{env: "ARR_MONITOR_DISABLE_AFTER", dur: &c.MonitorDisableAfter, def: "72h", help: "a list monitor whose webhook deliveries have failed this long without one succeeding is disabled, and its account mailed"},
		{env: "ARR_WEBHOOK_PRIVATE", str: &c.WebhookPrivate, def: "deny", help: "allow lets list monitors' webhooks and webhook guardrails go to loopback and private addresses (tests); deny: public addresses only", choices: []string{"deny", "allow"}},
		{env: "ARR_MAP_BASEMAP_URL", str: &c.MapBasemapURL, help: "raster tiles under the records service's map page at /map: an http(s) URL template with {z}, {x} and {y} (e.g. https://tile.openstreetmap.org/{z}/{x}/{y}.png, within its usage policy); empty shows the parcels on a plain background and the page loads nothing from elsewhere"},
		{env: "ARR_MAP_BASEMAP_ATTRIBUTION", str: &c.MapAttribution, help: "attribution the map page shows for ARR_MAP_BASEMAP_URL's tiles (e.g. © OpenStreetMap contributors)"},
		{env: "ARR_DEMO_DATA", str: &c.DemoData, def: "true", help: "true: `arr up` loads the shipped public-record demo data on first start; false: it does not", choices: []string{"true", "false"}},
		{env: "ARR_CATALOG", str: &c.Catalog, help: "model catalog file of the gateway (tiers of upstream models, prices, quality, context windows); empty uses the catalog shipped in the binary"},
		{env: "ARR_MODEL_ALIASES", str: &c.ModelAliases, help: "extra model-name aliases of the gateway, name=target pairs separated by commas (claude-*sonnet*=mid,my-model=gpt-4.1): a name (or a pattern, * matching any run of characters) that a client sends as its model stands for auto, a tier or a catalog model id; they overlay the catalog's \"aliases\" (the shipped catalog maps claude-*opus*, claude-*sonnet* and claude-*haiku* to high, mid and small)"},
		{env: "ARR_UPSTREAM_BASE_URL", str: &c.UpstreamBaseURL, help: "one OpenAI-compatible server (vLLM, Ollama, llama.cpp, …; e.g. http://127.0.0.1:11434/v1) that serves every catalog model, instead of each model's base_url"},
		{env: "ARR_UPSTREAM_API_KEY", str: &c.UpstreamAPIKey, secret: true, help: "API key sent to ARR_UPSTREAM_BASE_URL"},
		{env: "ARR_UPSTREAM_MODEL", str: &c.UpstreamModel, help: "with ARR_UPSTREAM_BASE_URL: the model name sent to that server for every catalog chat model (the model a local server has, e.g. llama3.2 on Ollama); empty sends each catalog model's upstream_model. Routing, prices and audit entries still name the catalog's models"},
		{env: "ARR_UPSTREAM_TIMEOUT", dur: &c.UpstreamTimeout, def: "60s", help: "timeout of an upstream call until its response headers (a whole non-streamed reply), and of the gap between stream chunks"},
		{env: "ARR_GATEWAY_MAX_REQUEST_DURATION", dur: &c.MaxRequestDuration, def: "30m", help: "longest a gateway completion may run, a stream's included: a stream still running then ends with an error event max_request_duration_exceeded (what was relayed is recorded and billed), a reply not yet sent is 504 max_request_duration_exceeded"},
		{env: "ARR_GATEWAY_BODIES_MB", num: &c.BodiesMB, def: "64", min: 4, help: "MiB of request bodies a gateway process holds in flight at most, every route's; a body is charged by the bytes that have arrived (32 KiB at a time, never by its Content-Length), from when they are read until its request ends, a stream's included, so an idle or slow sender holds (almost) nothing; a chunk that does not fit waits up to ARR_GATEWAY_BODY_WAIT, then the youngest waiting request is refused 503 (529 overloaded_error on /v1/messages) bodies_in_flight with Retry-After; the refused body is read and dropped, never kept"},
		{env: "ARR_GATEWAY_ACCOUNT_BODIES_MB", num: &c.AccountBodiesMB, def: "16", min: 4, help: "MiB of request bodies one account (all its keys and sessions; a request with neither: its client IP) holds in flight at most in a gateway process (at most ARR_GATEWAY_BODIES_MB); past it a chunk waits up to ARR_GATEWAY_BODY_WAIT, then the account's youngest waiting request is refused 429 account_bodies_in_flight (type rate_limit_error) with Retry-After; the refused body is read and dropped, never kept"},
		{env: "ARR_GATEWAY_BODY_WAIT", dur: &c.BodyWait, def: "1s", zeroOK: true, help: "how long a chunk of a gateway request body waits for room under ARR_GATEWAY_BODIES_MB and ARR_GATEWAY_ACCOUNT_BODIES_MB before the youngest waiting request is refused (0: at once)"},
		{env: "ARR_UPSTREAM_BREAKER_FAILURES", num: &c.BreakerFailures, def: "5", help: "failures in a row that open an upstream model's circuit breaker", min: 1},
		{env: "ARR_UPSTREAM_BREAKER_OPEN", dur: &c.BreakerOpen, def: "30s", help: "how long an open circuit breaker skips its upstream before one probe"},
		{env: "ARR_CACHE_ENTRIES", num: &c.CacheEntries, def: "10000", help: "size of the gateway's exact-match response cache (0 turns it off)", min: 0},
		{env: "ARR_CACHE_TTL", dur: &c.CacheTTL, def: "1h", help: "how long a cached gateway reply is served"},
		{env: "ARR_AUDIT_HMAC_KEY", str: &c.AuditHMACKey, secret: true, help: "gateway audit hash key (64 hex digits or base64 of 32 bytes): request_hash and response_hash in audit entries are HMAC-SHA-256 under it; empty uses ARR_DATA_DIR/audit-hmac.key, made by the first gateway when the database names no key; give gateways on other machines the same key: the database records its fingerprint, and a gateway with another key, or none, stops at start (exit 2)"},
		{env: "ARR_AUDITOR_KEY", str: &c.AuditorKey, secret: true, help: "operator audit key (header X-Auditor-Key, at least 32 characters) that reads the payload of every audit entry on GET /v1/audit/{hash}; empty turns it off"},
		{env: "ARR_LOG_SIGNING_KEY", str: &c.LogSigningKey, secret: true, help: "Ed25519 key that signs the event log's tree heads: PEM (PKCS #8, as `openssl genpkey -algorithm ed25519` writes it) or base64 of the 32-byte seed; empty uses ARR_DATA_DIR/log-signing-key.pem, made by the first signer when the database names no key; every process that signs heads of one log needs the same key: the database records its public key, and a signer with another key, or none, stops at start (exit 2)"},
		{env: "ARR_LOG_ORIGIN", str: &c.LogOrigin, def: "arr.localhost/log", help: "name of the event log in its signed heads (the C2SP checkpoint origin and key name): no spaces or plus signs, e.g. arr.example.com/log"},
		{env: "ARR_LOG_CHECKPOINT_EVENTS", num: &c.LogCheckpointEvery, def: "1000", min: 1, help: "sign a tree head once the log has grown by this many events since the last one"},
		{env: "ARR_LOG_CHECKPOINT_INTERVAL", dur: &c.LogCheckpointTime, def: "30s", help: "sign a tree head of a log that has grown at all once this long has passed since the last one"},
		{env: "ARR_KEY_CACHE", str: &c.KeyCache, def: "false", help: "true: each server process authenticates API keys from memory, dropping them on every revocation or plan change it is notified of; a change made by another process (the CLI, another server) then takes effect when its notification arrives, normally within milliseconds, instead of before that process's command returns; false: every keyed request looks its key up", choices: []string{"true", "false"}},
		{env: "ARR_PPROF_ADDR", str: &c.PprofAddr, help: "address of a Go profiling listener (net/http/pprof, e.g. 127.0.0.1:6060) for operators; keep it off public interfaces; empty serves none"},
		{env: "ARR_PUBLIC_BASE_URL", str: &c.PublicBaseURL, help: "base URL of every link the services build (sign-in mail, Stripe return URLs), e.g. https://{service}.arr.example ({service} becomes answer, gateway or records); sign-in and billing requests made to another host get 421 and no link; empty uses each service's listen address (http://127.0.0.1:8081 for answer; an all-interfaces address like 0.0.0.0 becomes 127.0.0.1, with a warning); never the request's Host header"},
		{env: "ARR_TRUSTED_PROXIES", str: &c.TrustedProxies, help: "comma-separated IP addresses and CIDR prefixes of the reverse proxies in front of arr (e.g. 127.0.0.1,10.0.0.0/8): only from these peers are X-Forwarded-For/X-Real-IP (the client IP of per-IP limits), X-Forwarded-Proto (Secure cookies) and X-Forwarded-Host believed; empty trusts nobody"},
	}, append(c.answerSettings(), c.traceSettings()...)...)
}

func flagName(env string) string { return strings.ToLower(strings.ReplaceAll(env, "_", "-")) }

// rawValue is a flag holding its setting's text as given; parse turns it
// into the typed field, strictly.
type rawValue struct {
	s   *string
	typ string
}

func (v rawValue) String() string     { return *v.s }
func (v rawValue) Set(x string) error { *v.s = x; return nil }
func (v rawValue) Type() string       { return v.typ }

// bind registers one persistent flag per setting, defaulting to the
// environment variable when set. The flags hold text: parse (run by
// Validate) turns it into the typed fields and reports every bad value.
func (c *Config) bind(fs *pflag.FlagSet, getenv func(string) string) {
	c.raw = map[string]*string{}
	for _, s := range c.settings() {
		v := s.def
		if e, ok := lookup(getenv, s.env); ok {
			v = e
		}
		raw := new(string)
		*raw = v
		c.raw[s.env] = raw
		help := s.help + " (env " + s.env + ")"
		typ := "string"
		switch {
		case s.num != nil:
			typ = "int"
		case s.dur != nil:
			typ = "duration"
		}
		f := fs.VarPF(rawValue{raw, typ}, flagName(s.env), "", help)
		if s.secret {
			f.DefValue = "" // --help never prints a secret
		} else {
			f.DefValue = v
		}
	}
}

// lookup reads an environment variable; set to the empty string counts as
// unset (as the shell's VAR= does), so the default applies.
func lookup(getenv func(string) string, env string) (string, bool) {
	v := getenv(env)
	return v, v != ""
}

// parse sets the typed fields from the flags' text, strictly: a number
// must be a whole number in its bounds, a duration a Go duration, a
// choice one of its values. It reports every bad value.
func (c *Config) parse() ConfigErrors {
	var errs ConfigErrors
	for _, s := range c.settings() {
		raw := s.def
		if r, ok := c.raw[s.env]; ok {
			raw = *r
		}
		if err := s.set(raw); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

func (s setting) set(raw string) error {
	bad := func(want string) error { return &configError{env: s.env, value: raw, want: want} }
	switch {
	case s.num != nil:
		n, err := strconv.Atoi(raw)
		if err != nil || n < s.min || (s.max > 0 && n > s.max) {
			if s.max > 0 {
				return bad(fmt.Sprintf("a whole number from %d to %d, like %s", s.min, s.max, s.def))
			}
			return bad(fmt.Sprintf("a whole number of at least %d, like %s", s.min, s.def))
		}
		*s.num = n
	case s.dur != nil:
		d, err := time.ParseDuration(raw)
		if err != nil || d < 0 || (d == 0 && !s.zeroOK) {
			return bad(fmt.Sprintf("a positive duration with a unit, like %s (units: ms, s, m, h)", s.def))
		}
		*s.dur = d
	default:
		if s.choices != nil && !slices.Contains(s.choices, raw) {
			return bad("one of " + strings.Join(s.choices, ", "))
		}
		*s.str = raw
	}
	return nil
}

// minAuditorKey is the shortest ARR_AUDITOR_KEY accepted.
const minAuditorKey = 32

// Validate parses every setting strictly and checks them together; it
// reports every problem at once (ConfigErrors), not the first.
func (c *Config) Validate() error {
	errs := c.parse()
	add := func(env, want string) {
		errs = append(errs, &configError{env: env, value: c.rawOf(env), want: want})
	}
	if c.EventStore == "kurrentdb" && c.KurrentDBURL == "" {
		add("KURRENTDB_URL", "a KurrentDB connection string when ARR_EVENTSTORE=kurrentdb, like esdb://127.0.0.1:2113?tls=false")
	}
	if c.PublicBaseURL != "" {
		if _, err := httpx.NewSite(strings.ReplaceAll(c.PublicBaseURL, "{service}", "gateway")); err != nil {
			add("ARR_PUBLIC_BASE_URL", "an absolute http(s) URL in printable ASCII without user, query or fragment, like https://{service}.arr.example")
		}
	}
	if _, err := httpx.ParseTrustedProxies(c.TrustedProxies); err != nil {
		add("ARR_TRUSTED_PROXIES", fmt.Sprintf("comma-separated IP addresses or CIDR prefixes, like 127.0.0.1,10.0.0.0/8 (%v)", err))
	}
	if err := verifier.CheckOrigin(c.LogOrigin); err != nil {
		add("ARR_LOG_ORIGIN", fmt.Sprintf("a log name without spaces or plus signs, like arr.example.com/log (%v)", err))
	}
	if c.LogCheckpointTime > 0 && c.LogCheckpointTime < time.Second { // (0: refused by parse already)
		add("ARR_LOG_CHECKPOINT_INTERVAL", "a duration of at least 1s, like 30s")
	}
	if c.UpstreamModel != "" && c.UpstreamBaseURL == "" {
		add("ARR_UPSTREAM_MODEL", "only with ARR_UPSTREAM_BASE_URL (the server it names the model to), like ARR_UPSTREAM_BASE_URL=http://127.0.0.1:11434/v1 ARR_UPSTREAM_MODEL=llama3.2")
	}
	if c.AccountBodiesMB > c.BodiesMB && c.BodiesMB >= 4 {
		add("ARR_GATEWAY_ACCOUNT_BODIES_MB", fmt.Sprintf("at most ARR_GATEWAY_BODIES_MB (%d)", c.BodiesMB))
	}
	if c.AuditorKey != "" && len(c.AuditorKey) < minAuditorKey {
		// The value is a secret: never shown.
		errs = append(errs, fmt.Errorf("ARR_AUDITOR_KEY (flag --arr-auditor-key): want at least %d characters (it reads every account's audit payloads), e.g. 32 hex digits", minAuditorKey))
	}
	if u := c.MapBasemapURL; u != "" && !validBasemap(u) {
		add("ARR_MAP_BASEMAP_URL", "an absolute http(s) URL template holding {z}, {x} and {y}, like https://tile.openstreetmap.org/{z}/{x}/{y}.png")
	}
	if u := c.ReadDatabaseURL; u != "" {
		if _, err := pgxpool.ParseConfig(u); err != nil {
			// The URL may hold a password: never shown.
			errs = append(errs, fmt.Errorf("ARR_READ_DATABASE_URL (flag --%s): want a PostgreSQL URL of a streaming replica of DATABASE_URL, like postgres://arr@replica.example:5432/arr (the value is not shown)",
				flagName("ARR_READ_DATABASE_URL")))
		}
	}
	errs = append(errs, c.keyErrors()...)
	errs = append(errs, c.Answer.validate(c)...)
	errs = append(errs, c.Traces.validate(c)...)
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// keyErrors checks the form of the keys given in the configuration; the
// values are secrets and never shown. Whether a key is the database's is
// checked when a command that uses it starts (bindKeys).
func (c *Config) keyErrors() ConfigErrors {
	var errs ConfigErrors
	for _, k := range []struct{ env, value string }{{"ARR_MASTER_KEY", c.MasterKey}, {"ARR_AUDIT_HMAC_KEY", c.AuditHMACKey}} {
		if _, err := secretkey.Parse(k.value); k.value != "" && err != nil {
			errs = append(errs, fmt.Errorf("%s (flag --%s): want 64 hex digits or base64 of 32 bytes (the value is not shown)", k.env, flagName(k.env)))
		}
	}
	if _, err := transparency.ParsePrivateKey(c.LogSigningKey); c.LogSigningKey != "" && err != nil {
		errs = append(errs, fmt.Errorf("ARR_LOG_SIGNING_KEY (flag --arr-log-signing-key): want an Ed25519 key, PEM (PKCS #8) or base64 of the 32-byte seed (%v; the value is not shown)", err))
	}
	return errs
}

// rawOf is the text a setting was given.
func (c *Config) rawOf(env string) string {
	if r, ok := c.raw[env]; ok {
		return *r
	}
	return ""
}

// logger is the process's logger; ARR_LOG_LEVEL is one of its choices
// once Validate has passed (anything else logs at info).
func (c *Config) logger() *slog.Logger {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(c.LogLevel)); err != nil {
		lvl = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: lvl}
	if c.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(os.Stderr, opts))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, opts))
}

// validBasemap reports whether u is a raster tile URL template: absolute
// http(s), with {z}, {x} and {y}.
func validBasemap(u string) bool {
	for _, p := range []string{"{z}", "{x}", "{y}"} {
		if !strings.Contains(u, p) {
			return false
		}
	}
	parsed, err := url.Parse(strings.NewReplacer("{z}", "0", "{x}", "0", "{y}", "0").Replace(u))
	return err == nil && (parsed.Scheme == "http" || parsed.Scheme == "https") && parsed.Host != ""
}
