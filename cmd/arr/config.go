package main

import (
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/eventstore/transparency/verifier"
	"github.com/arr-dev/arr/readapi/httpx"
)

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
	BatchSize     int
	BatchTimeout  time.Duration
	RedisURL      string
	PublicLimit   int

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
	// KeyCache: "true" authenticates API keys from memory (see
	// projections.Identities.ListenForChanges).
	KeyCache string
	// The gateway's routing (UpstreamAPIKey is a secret: never shown).
	Catalog         string
	UpstreamBaseURL string
	UpstreamAPIKey  string
	UpstreamTimeout time.Duration
	BreakerFailures int
	BreakerOpen     time.Duration
	CacheEntries    int
	CacheTTL        time.Duration
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
}

type setting struct {
	env, help string
	str       *string
	num       *int
	dur       *time.Duration
	def       string
	secret    bool // its value is never shown as the flag's default
}

func (c *Config) settings() []setting {
	return append([]setting{
		{env: "DATABASE_URL", str: &c.DatabaseURL, help: "PostgreSQL (with PostGIS) URL; empty starts a private PostgreSQL under ARR_DATA_DIR"},
		{env: "ARR_DATA_DIR", str: &c.DataDir, def: ".arr", help: "directory for the embedded PostgreSQL and local state"},
		{env: "ARR_EMBEDDED_PG_PORT", num: &c.EmbeddedPort, def: "54329", help: "port of the embedded PostgreSQL (127.0.0.1 only)"},
		{env: "ARR_EVENTSTORE", str: &c.EventStore, def: "postgres", help: "event store: postgres or kurrentdb"},
		{env: "KURRENTDB_URL", str: &c.KurrentDBURL, help: "KurrentDB connection string when ARR_EVENTSTORE=kurrentdb"},
		{env: "ARR_BUS", str: &c.Bus, def: "none", help: "event fan-out: none, gochannel or nats"},
		{env: "NATS_URL", str: &c.NATSURL, def: "nats://127.0.0.1:4222", help: "NATS server when ARR_BUS=nats"},
		{env: "ARR_ANSWER_ADDR", str: &c.AnswerAddr, def: "127.0.0.1:8081", help: "listen address of the answer service"},
		{env: "ARR_GATEWAY_ADDR", str: &c.GatewayAddr, def: "127.0.0.1:8082", help: "listen address of the routing gateway"},
		{env: "ARR_RECORDS_ADDR", str: &c.RecordsAddr, def: "127.0.0.1:8083", help: "listen address of the records service"},
		{env: "ARR_LOG_LEVEL", str: &c.LogLevel, def: "info", help: "debug, info, warn or error"},
		{env: "ARR_LOG_FORMAT", str: &c.LogFormat, def: "text", help: "text or json"},
		{env: "ARR_SHUTDOWN_GRACE", dur: &c.ShutdownGrace, def: "20s", help: "how long SIGINT/SIGTERM waits for in-flight requests"},
		{env: "ARR_READ_YOUR_WRITES_TIMEOUT", dur: &c.RYWTimeout, def: "5s", help: "bound on waiting for read models to show a write"},
		{env: "ARR_PROJECTION_BATCH_SIZE", num: &c.BatchSize, def: "2000", help: "most events a projection applies per transaction"},
		{env: "ARR_PROJECTION_BATCH_TIMEOUT", dur: &c.BatchTimeout, def: "60s", help: "time a projection transaction gets; one that runs out is retried with twice the time (up to 1h)"},
		{env: "STRIPE_API_KEY", str: &c.StripeAPIKey, secret: true, help: "Stripe secret key; empty turns billing off (checkout and portal answer 503)"},
		{env: "STRIPE_API_BASE", str: &c.StripeAPIBase, def: "https://api.stripe.com", help: "Stripe API base URL (tests point it at stripe-mock)"},
		{env: "STRIPE_WEBHOOK_SECRET", str: &c.StripeWebhookSecret, secret: true, help: "signing secret of the Stripe webhook endpoint POST /v1/stripe/webhook"},
		{env: "ARR_ADMIN_KEY", str: &c.AdminKey, secret: true, help: "operator key (header X-Admin-Key) that bypasses the public checkout's plan checks; empty turns the bypass off"},
		{env: "REDIS_URL", str: &c.RedisURL, help: "Redis for the quota counters (redis://host:6379/0); empty counts in PostgreSQL"},
		{env: "ARR_PUBLIC_RATE_LIMIT", num: &c.PublicLimit, def: "600", help: "requests per clock hour per client IP on the records service's key-less endpoints"},
		{env: "SMTP_URL", str: &c.SMTPURL, secret: true, help: "SMTP server for sign-in mail: smtp://user:pass@host:587 (STARTTLS when offered) or smtps://…:465; empty prints each mail to the log instead"},
		{env: "ARR_MAIL_FROM", str: &c.MailFrom, def: "arr <no-reply@arr.localhost>", help: "sender of arr's mail"},
		{env: "ARR_MASTER_KEY", str: &c.MasterKey, secret: true, help: "records service master key (64 hex digits or base64 of 32 bytes) wrapping each account's data key; empty uses (and on first use creates) ARR_DATA_DIR/master.key"},
		{env: "ARR_DEMO_DATA", str: &c.DemoData, def: "true", help: "true: `arr up` loads the shipped public-record demo data on first start; false: it does not"},
		{env: "ARR_CATALOG", str: &c.Catalog, help: "model catalog file of the gateway (tiers of upstream models, prices, quality, context windows); empty uses the catalog shipped in the binary"},
		{env: "ARR_UPSTREAM_BASE_URL", str: &c.UpstreamBaseURL, help: "one OpenAI-compatible server (vLLM, Ollama, llama.cpp, …; e.g. http://127.0.0.1:11434/v1) that serves every catalog model, instead of each model's base_url"},
		{env: "ARR_UPSTREAM_API_KEY", str: &c.UpstreamAPIKey, secret: true, help: "API key sent to ARR_UPSTREAM_BASE_URL"},
		{env: "ARR_UPSTREAM_TIMEOUT", dur: &c.UpstreamTimeout, def: "60s", help: "timeout of an upstream call until its response headers (a whole non-streamed reply), and of the gap between stream chunks"},
		{env: "ARR_UPSTREAM_BREAKER_FAILURES", num: &c.BreakerFailures, def: "5", help: "failures in a row that open an upstream model's circuit breaker"},
		{env: "ARR_UPSTREAM_BREAKER_OPEN", dur: &c.BreakerOpen, def: "30s", help: "how long an open circuit breaker skips its upstream before one probe"},
		{env: "ARR_CACHE_ENTRIES", num: &c.CacheEntries, def: "10000", help: "size of the gateway's exact-match response cache (0 turns it off)"},
		{env: "ARR_CACHE_TTL", dur: &c.CacheTTL, def: "1h", help: "how long a cached gateway reply is served"},
		{env: "ARR_AUDIT_HMAC_KEY", str: &c.AuditHMACKey, secret: true, help: "gateway audit hash key (64 hex digits or base64 of 32 bytes): request_hash and response_hash in audit entries are HMAC-SHA-256 under it; empty uses (and on first use creates) ARR_DATA_DIR/audit-hmac.key; processes sharing ARR_DATA_DIR share that file; give gateways on other machines the same key"},
		{env: "ARR_AUDITOR_KEY", str: &c.AuditorKey, secret: true, help: "operator audit key (header X-Auditor-Key, at least 32 characters) that reads the payload of every audit entry on GET /v1/audit/{hash}; empty turns it off"},
		{env: "ARR_LOG_SIGNING_KEY", str: &c.LogSigningKey, secret: true, help: "Ed25519 key that signs the event log's tree heads: PEM (PKCS #8, as `openssl genpkey -algorithm ed25519` writes it) or base64 of the 32-byte seed; empty uses (and on first use creates) ARR_DATA_DIR/log-signing-key.pem; every process that signs heads of one log needs the same key"},
		{env: "ARR_LOG_ORIGIN", str: &c.LogOrigin, def: "arr.localhost/log", help: "name of the event log in its signed heads (the C2SP checkpoint origin and key name): no spaces or plus signs, e.g. arr.example.com/log"},
		{env: "ARR_LOG_CHECKPOINT_EVENTS", num: &c.LogCheckpointEvery, def: "1000", help: "sign a tree head once the log has grown by this many events since the last one"},
		{env: "ARR_LOG_CHECKPOINT_INTERVAL", dur: &c.LogCheckpointTime, def: "30s", help: "sign a tree head of a log that has grown at all once this long has passed since the last one"},
		{env: "ARR_KEY_CACHE", str: &c.KeyCache, def: "false", help: "true: each server process authenticates API keys from memory, dropping them on every revocation or plan change it is notified of; a change made by another process (the CLI, another server) then takes effect when its notification arrives, normally within milliseconds, instead of before that process's command returns; false: every keyed request looks its key up"},
		{env: "ARR_PPROF_ADDR", str: &c.PprofAddr, help: "address of a Go profiling listener (net/http/pprof, e.g. 127.0.0.1:6060) for operators; keep it off public interfaces; empty serves none"},
		{env: "ARR_PUBLIC_BASE_URL", str: &c.PublicBaseURL, help: "base URL of every link the services build (sign-in mail, Stripe return URLs), e.g. https://{service}.arr.example ({service} becomes answer, gateway or records); sign-in and billing requests made to another host get 421 and no link; empty uses each service's listen address (http://127.0.0.1:8081 for answer; an all-interfaces address like 0.0.0.0 becomes 127.0.0.1, with a warning); never the request's Host header"},
		{env: "ARR_TRUSTED_PROXIES", str: &c.TrustedProxies, help: "comma-separated IP addresses and CIDR prefixes of the reverse proxies in front of arr (e.g. 127.0.0.1,10.0.0.0/8): only from these peers are X-Forwarded-For/X-Real-IP (the client IP of per-IP limits), X-Forwarded-Proto (Secure cookies) and X-Forwarded-Host believed; empty trusts nobody"},
	}, c.answerSettings()...)
}

func flagName(env string) string { return strings.ToLower(strings.ReplaceAll(env, "_", "-")) }

// bind registers one persistent flag per setting, defaulting to the
// environment variable when set.
func (c *Config) bind(fs *pflag.FlagSet, getenv func(string) string) {
	for _, s := range c.settings() {
		def := s.def
		if v := getenv(s.env); v != "" {
			def = v
		}
		help := s.help + " (env " + s.env + ")"
		switch {
		case s.secret:
			fs.StringVar(s.str, flagName(s.env), "", help)
			*s.str = def // set after registering, so --help never prints it
		case s.str != nil:
			fs.StringVar(s.str, flagName(s.env), def, help)
		case s.num != nil:
			var n int
			fmt.Sscan(def, &n)
			fs.IntVar(s.num, flagName(s.env), n, help)
		case s.dur != nil:
			d, _ := time.ParseDuration(def)
			fs.DurationVar(s.dur, flagName(s.env), d, help)
		}
	}
}

// minAuditorKey is the shortest ARR_AUDITOR_KEY accepted.
const minAuditorKey = 32

// Validate checks the values that have a fixed set of choices.
func (c *Config) Validate() error {
	switch c.EventStore {
	case "postgres":
	case "kurrentdb":
		if c.KurrentDBURL == "" {
			return fmt.Errorf("ARR_EVENTSTORE=kurrentdb needs KURRENTDB_URL (e.g. esdb://127.0.0.1:2113?tls=false)")
		}
	default:
		return fmt.Errorf("ARR_EVENTSTORE must be postgres or kurrentdb, not %q", c.EventStore)
	}
	switch c.Bus {
	case "none", "gochannel", "nats":
	default:
		return fmt.Errorf("ARR_BUS must be none, gochannel or nats, not %q", c.Bus)
	}
	if c.BatchTimeout <= 0 {
		return fmt.Errorf("ARR_PROJECTION_BATCH_TIMEOUT must be a positive duration, not %s", c.BatchTimeout)
	}
	if c.BatchSize < 1 || c.BatchSize > 100000 {
		return fmt.Errorf("ARR_PROJECTION_BATCH_SIZE must be between 1 and 100000, not %d", c.BatchSize)
	}
	if c.PublicBaseURL != "" {
		if _, err := httpx.NewSite(strings.ReplaceAll(c.PublicBaseURL, "{service}", "gateway")); err != nil {
			return domain.Invalid("invalid_public_base_url", "ARR_PUBLIC_BASE_URL",
				"ARR_PUBLIC_BASE_URL must be an absolute http(s) URL without user, query or fragment, like https://{service}.arr.example; got %q", c.PublicBaseURL)
		}
	}
	if _, err := httpx.ParseTrustedProxies(c.TrustedProxies); err != nil {
		return domain.Invalid("invalid_trusted_proxies", "ARR_TRUSTED_PROXIES",
			"ARR_TRUSTED_PROXIES=%q: %v; want comma-separated IP addresses or CIDR prefixes, like 127.0.0.1,10.0.0.0/8", c.TrustedProxies, err)
	}
	if err := verifier.CheckOrigin(c.LogOrigin); err != nil {
		return fmt.Errorf("ARR_LOG_ORIGIN=%q: %w; use a name without spaces or plus signs, like arr.example.com/log", c.LogOrigin, err)
	}
	if c.LogCheckpointEvery < 1 {
		return fmt.Errorf("ARR_LOG_CHECKPOINT_EVENTS must be at least 1, not %d", c.LogCheckpointEvery)
	}
	if c.LogCheckpointTime < time.Second {
		return fmt.Errorf("ARR_LOG_CHECKPOINT_INTERVAL must be at least 1s, not %s", c.LogCheckpointTime)
	}
	if c.PublicLimit < 1 {
		return fmt.Errorf("ARR_PUBLIC_RATE_LIMIT must be at least 1, not %d", c.PublicLimit)
	}
	if c.KeyCache != "true" && c.KeyCache != "false" {
		return fmt.Errorf("ARR_KEY_CACHE must be true or false, not %q", c.KeyCache)
	}
	if c.DemoData != "true" && c.DemoData != "false" {
		return fmt.Errorf("ARR_DEMO_DATA must be true or false, not %q", c.DemoData)
	}
	if c.UpstreamTimeout <= 0 || c.BreakerOpen <= 0 || c.CacheTTL <= 0 || c.BreakerFailures < 1 || c.CacheEntries < 0 {
		return fmt.Errorf("ARR_UPSTREAM_TIMEOUT, ARR_UPSTREAM_BREAKER_OPEN and ARR_CACHE_TTL must be positive, ARR_UPSTREAM_BREAKER_FAILURES at least 1, ARR_CACHE_ENTRIES not negative")
	}
	if c.AuditorKey != "" && len(c.AuditorKey) < minAuditorKey {
		return fmt.Errorf("ARR_AUDITOR_KEY must be at least %d characters (it reads every account's audit payloads), e.g. 32 hex digits", minAuditorKey)
	}
	if c.ShutdownGrace <= 0 || c.RYWTimeout <= 0 {
		return fmt.Errorf("ARR_SHUTDOWN_GRACE and ARR_READ_YOUR_WRITES_TIMEOUT must be positive durations")
	}
	return c.Answer.validate()
}

func (c *Config) logger() *slog.Logger {
	var lvl slog.Level
	_ = lvl.UnmarshalText([]byte(c.LogLevel))
	opts := &slog.HandlerOptions{Level: lvl}
	if c.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(os.Stderr, opts))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, opts))
}
