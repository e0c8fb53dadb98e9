package ratelimit

import (
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/arr-dev/arr/projections/identity"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/account"
)

// DefaultPublicPerHour is the per-IP limit of the public (key-less)
// endpoints, per clock hour: the records service's and the gateway's
// /v1/log routes.
const DefaultPublicPerHour = 600

// Config configures a Quota.
type Config struct {
	// PublicPerHour is how many requests one client IP (IPv6: one /64) may
	// make without a key to a service's public endpoints (the records
	// service's, the gateway's /v1/log routes) per clock hour.
	// Default DefaultPublicPerHour.
	PublicPerHour int64
	// Now is the clock that picks the window. Default time.Now.
	Now    func() time.Time
	Logger *slog.Logger
	// Postgres is the PostgreSQL limiter the Quota's Limiter wraps, if
	// it is one: a gateway request is then counted in its key's look-up
	// (PrepareGateway) when that look-up happens.
	Postgres *Postgres
	// Defer, if set, may leave the count of a gateway request to the
	// key's reservation (see Deferred); it needs Postgres.
	Defer DeferFunc
}

// Validate fills in defaults and checks the values.
func (c *Config) Validate() error {
	if c.PublicPerHour == 0 {
		c.PublicPerHour = DefaultPublicPerHour
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.PublicPerHour < 1 {
		return fmt.Errorf("ratelimit: PublicPerHour must be at least 1, not %d", c.PublicPerHour)
	}
	if c.Defer != nil && c.Postgres == nil {
		return errNoPostgres
	}
	return nil
}

// PrincipalFunc returns the authenticated principal of a request (the key
// middleware put it there).
type PrincipalFunc func(*gin.Context) (identity.Principal, bool)

// FailFunc is a service's error responder.
type FailFunc func(*gin.Context, error)

// refusing is the middleware that runs admit and, when admit returns an
// error (a refusal, or a counter that failed), stops the chain and answers
// the error through fail; a nil error lets the chain go on. It is
// httpx.Handle for a middleware that answers before anything is written
// (httpx imports this package, so it cannot be used here).
func refusing(fail FailFunc, admit func(*gin.Context) error) gin.HandlerFunc {
	return func(c *gin.Context) {
		if err := admit(c); err != nil {
			c.Abort()
			fail(c, err)
		}
	}
}

// Quota builds the services' limit middlewares on one Limiter. A nil
// *Quota builds middlewares that limit nothing (for tests of other parts).
// Safe for concurrent use.
type Quota struct {
	limiter Limiter
	cfg     Config
}

// New returns a Quota counting with l.
func New(l Limiter, cfg Config) (*Quota, error) {
	if l == nil {
		return nil, errors.New("ratelimit: nil limiter")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Quota{limiter: l, cfg: cfg}, nil
}

// PublicPerHour is the per-IP limit of the records service's public endpoints.
func (q *Quota) PublicPerHour() int64 { return q.cfg.PublicPerHour }

// rule is how one service counts a keyed request.
type rule struct {
	svc    account.Service
	code   string
	window func(time.Time) Window
	limit  func(account.Limits) int64
	bucket func(identity.Principal) string
	what   string // "100 gateway requests per account per UTC day"
	resets string // "daily" or "hourly"
	// deferrable: the count may be left to the key's reservation
	// (Config.Defer).
	deferrable bool
}

// Gateway limits the gateway's keyed routes: the plan's
// GatewayRequestsPerDay per account (all its gateway keys together) per
// UTC day.
func (q *Quota) Gateway(principal PrincipalFunc, fail FailFunc) gin.HandlerFunc {
	return q.keyedRoute(rule{
		svc: account.Gateway, code: "daily_request_limit_reached", window: DayWindow, resets: "daily", deferrable: true,
		limit:  func(l account.Limits) int64 { return l.GatewayRequestsPerDay },
		bucket: func(p identity.Principal) string { return AccountBucket(account.Gateway, p.AccountID) },
		what:   "gateway requests per account per UTC day",
	}, principal, fail)
}

// Answer limits the answer service's keyed routes: the plan's
// AnswerCallsPerDay per key per UTC day.
func (q *Quota) Answer(principal PrincipalFunc, fail FailFunc) gin.HandlerFunc {
	return q.keyedRoute(rule{
		svc: account.Answer, code: "daily_call_limit_reached", window: DayWindow, resets: "daily",
		limit:  func(l account.Limits) int64 { return l.AnswerCallsPerDay },
		bucket: func(p identity.Principal) string { return KeyBucket(account.Answer, p.KeyID) },
		what:   "answer calls per key per UTC day",
	}, principal, fail)
}

// Records limits the records service's keyed routes: the plan's
// RecordsRequestsPerHour per key per fixed clock hour.
func (q *Quota) Records(principal PrincipalFunc, fail FailFunc) gin.HandlerFunc {
	return q.keyedRoute(recordsRule, principal, fail)
}

// recordsRule counts a records key's requests.
var recordsRule = rule{
	svc: account.Records, code: "hourly_request_limit_reached", window: HourWindow, resets: "hourly",
	limit:  func(l account.Limits) int64 { return l.RecordsRequestsPerHour },
	bucket: func(p identity.Principal) string { return KeyBucket(account.Records, p.KeyID) },
	what:   "records requests per key per clock hour",
}

// keyedRoute is the middleware of a keyed route counted by r.
func (q *Quota) keyedRoute(r rule, principal PrincipalFunc, fail FailFunc) gin.HandlerFunc {
	if q == nil {
		return func(c *gin.Context) { c.Next() }
	}
	return refusing(fail, q.keyed(r, principal))
}

// keyed admits a request with a principal against r.
func (q *Quota) keyed(r rule, principal PrincipalFunc) func(*gin.Context) error {
	return func(c *gin.Context) error {
		p, ok := principal(c)
		if !ok {
			// The key middleware runs first; reaching here without a
			// principal is a wiring bug, not a client error.
			return errors.New("ratelimit: keyed route without a principal")
		}
		offer := p.Plan.Offer()
		limit := r.limit(offer.Limits)
		refusal := func(res Result, retry int64) error {
			return domain.RateLimited(r.code,
				"%s limit reached: the %s plan allows %d %s; the limit resets at %s (in %d s, see Retry-After). "+
					"To raise it, upgrade the plan on the account page (/account); plans and their limits are listed at GET /v1/plans of the gateway",
				r.resets, offer.Title, limit, r.what, res.Window.End.Format(time.RFC3339), retry)
		}
		if r.deferrable {
			if res, ok := ridden(c, r.bucket(p)); ok {
				return q.counted(c, r.bucket(p), res, refusal) // in the key's look-up
			}
		}
		if r.deferrable && q.cfg.Defer != nil && limit >= 1 {
			now := q.cfg.Now()
			d := q.cfg.Postgres.Defer(r.bucket(p), r.window(now), limit, now, refusal)
			if ctx, ok := q.cfg.Defer(c.Request.Context(), p, d); ok {
				c.Request = c.Request.WithContext(ctx)
				q.deferred(c, d)
				return nil
			}
		}
		return q.take(c, r.bucket(p), r.window, limit, refusal)
	}
}

// PublicPerIP limits svc's public routes: Config.PublicPerHour requests per
// client IP per clock hour, in svc's own buckets, counted apart from every
// key's quota. Keys play no part (the gateway's /v1/log routes): the
// refusal says so and suggests none. The client IP is gin's
// Context.ClientIP: the TCP peer, or the address a trusted proxy
// forwarded (the engine's trusted proxies, httpx.Base.TrustedProxies;
// nobody by default), so a client cannot pick its own bucket with
// X-Forwarded-For.
func (q *Quota) PublicPerIP(svc account.Service, fail FailFunc) gin.HandlerFunc {
	if q == nil {
		return func(c *gin.Context) { c.Next() }
	}
	return refusing(fail, q.perIP(svc, ""))
}

// RecordsPublic limits the records service's public routes as the
// interface promises: a request made with a key (the optional key
// middleware put its principal there) is counted against the key's
// hourly quota, exactly like a keyed route (Records), and never by IP; a
// request without one is counted per client IP (PublicPerIP), and its
// refusal says that a key is counted per key instead. So keyed and
// key-less traffic cannot exhaust each other, and a keyed caller is never
// told to send the key it sent.
func (q *Quota) RecordsPublic(principal PrincipalFunc, fail FailFunc) gin.HandlerFunc {
	if q == nil {
		return func(c *gin.Context) { c.Next() }
	}
	keyed := q.keyed(recordsRule, principal)
	perIP := q.perIP(account.Records, " Requests made with a records API key (Authorization: Bearer or X-API-Key) are counted per key instead "+
		"(1000 per hour on the Free plan; more on paid plans, see the account page /account).")
	return refusing(fail, func(c *gin.Context) error {
		if _, ok := principal(c); ok {
			return keyed(c)
		}
		return perIP(c)
	})
}

// perIP admits a request against its client IP's bucket of svc; hint ends
// the refusal's message.
func (q *Quota) perIP(svc account.Service, hint string) func(*gin.Context) error {
	return func(c *gin.Context) error {
		limit := q.cfg.PublicPerHour
		return q.take(c, IPBucket(svc, c.ClientIP()), HourWindow, limit, func(res Result, retry int64) error {
			return domain.RateLimited("ip_rate_limit_reached",
				"hourly limit of the public endpoints reached: %d requests per IP address per clock hour; the limit resets at %s (in %d s, see Retry-After).%s",
				limit, res.Window.End.Format(time.RFC3339), retry, hint)
		})
	}
}

// Sign-in mail limits: magic links are e-mail we send on a stranger's
// request, so both the sender and the recipient are capped per clock hour.
const (
	SignInMailsPerAddress = 5
	SignInMailsPerIP      = 30
)

// SignInMail limits POST /account/signin: SignInMailsPerIP per client IP and
// SignInMailsPerAddress per recipient address (as normalized) per clock
// hour, across all three services, so the form cannot be used to flood a
// mailbox. Requests with no valid address pass through to the handler's
// own validation.
func (q *Quota) SignInMail(fail FailFunc) gin.HandlerFunc {
	if q == nil {
		return func(c *gin.Context) { c.Next() }
	}
	refusal := func(what string, limit int64) func(Result, int64) error {
		return func(res Result, retry int64) error {
			return domain.RateLimited("signin_rate_limit_reached",
				"too many sign-in links requested for this %s: at most %d per clock hour; try again after %s (in %d s)",
				what, limit, res.Window.End.Format(time.RFC3339), retry)
		}
	}
	return refusing(fail, func(c *gin.Context) error {
		if _, err := q.count(c, "signin-ip:"+c.ClientIP(), HourWindow, SignInMailsPerIP, refusal("IP address", SignInMailsPerIP)); err != nil {
			return err
		}
		if email, err := account.NormalizeEmail(c.PostForm("email")); err == nil {
			if _, err := q.count(c, "signin-email:"+email, HourWindow, SignInMailsPerAddress, refusal("address", SignInMailsPerAddress)); err != nil {
				return err
			}
		}
		return nil
	})
}

// take counts the request, sets the X-RateLimit-* headers and either runs
// the rest of the chain or returns the 429 refusal (or the 503 error if
// counting failed). A request the chain answers with a status that is not
// Served is given back.
func (q *Quota) take(c *gin.Context, bucket string, window func(time.Time) Window, limit int64, refusal func(Result, int64) error) error {
	res, err := q.count(c, bucket, window, limit, refusal)
	if err != nil {
		return err
	}
	q.countServed(c, bucket, res)
	return nil
}

// counted is take for a request counted already (res): the headers, the
// refusal of a full window, or the rest of the chain and the give-back.
func (q *Quota) counted(c *gin.Context, bucket string, res Result, refusal func(Result, int64) error) error {
	SetHeaders(c.Writer.Header(), res)
	if !res.Allowed {
		retry := res.Window.RetryAfter(q.cfg.Now())
		c.Header("Retry-After", strconv.FormatInt(retry, 10))
		return refusal(res, retry)
	}
	q.countServed(c, bucket, res)
	return nil
}

// count counts the request and sets the X-RateLimit-* headers; on a
// refusal it sets Retry-After and returns refusal's error, and when the
// counter fails an ErrUnavailable error (quota_unavailable). The request
// stays counted whatever its response.
func (q *Quota) count(c *gin.Context, bucket string, window func(time.Time) Window, limit int64, refusal func(Result, int64) error) (Result, error) {
	now := q.cfg.Now()
	w := window(now)
	res, err := q.limiter.Take(c.Request.Context(), bucket, w, limit)
	if err != nil {
		q.cfg.Logger.Error("quota counter unavailable: refusing the request", "bucket", bucket, "err", err,
			"request_id", c.GetString("request_id"))
		return res, &counterDown{cause: err}
	}
	SetHeaders(c.Writer.Header(), res)
	if !res.Allowed {
		retry := w.RetryAfter(now)
		c.Header("Retry-After", strconv.FormatInt(retry, 10))
		return res, refusal(res, retry)
	}
	return res, nil
}

// SetHeaders writes the X-RateLimit-* headers of a result.
func SetHeaders(h interface{ Set(string, string) }, res Result) {
	h.Set("X-RateLimit-Limit", strconv.FormatInt(res.Limit, 10))
	h.Set("X-RateLimit-Remaining", strconv.FormatInt(res.Remaining, 10))
	h.Set("X-RateLimit-Reset", unixString(res.Window.End))
}

// errQuotaUnavailable is the refusal of a request that could not be
// counted.
var errQuotaUnavailable = &domain.Error{Kind: domain.ErrUnavailable, Code: "quota_unavailable",
	Message: "the request could not be counted against its quota; retry shortly"}

// counterDown is a counter store that failed: a 503 (errQuotaUnavailable)
// that keeps its cause, so that the services' error mapping names a
// database outage as one (httpx.TranslateDB: database_unavailable).
type counterDown struct{ cause error }

func (e *counterDown) Error() string {
	return "counting the request against its quota: " + e.cause.Error()
}
func (e *counterDown) Unwrap() []error { return []error{errQuotaUnavailable, e.cause} }
