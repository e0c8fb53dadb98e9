package billingapi

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/commands/billing"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/readapi/httpx"
)

// AdminKeyHeader carries the operator's admin key on the public checkout.
const AdminKeyHeader = "X-Admin-Key"

// handlers serve the routes; b's core is nil when billing is not
// configured, and then every route answers 503.
type handlers struct {
	b    *Billing
	d    httpx.Deps
	fail func(*gin.Context, error)
}

// Register adds the billing routes to the gateway's engine:
//
//	POST /v1/me/checkout       session + CSRF   {plan} → {id, url}
//	POST /v1/me/portal         session + CSRF   → {url}
//	POST /v1/checkout/session  public, X-Admin-Key bypass   {email, plan} → {id, url}
//	POST /v1/stripe/webhook    Stripe-Signature → {received, …}
//
// The three routes that build return URLs answer only requests made to
// one of d.Site's hosts, and 421 to others.
//
// Without the application's Billing (Stripe not configured) every route
// answers 503; d.App.Queries.Identities and d.App.Now load sessions. fail
// is the gateway's error responder.
func Register(e *gin.Engine, d httpx.Deps, b *Billing, fail func(*gin.Context, error)) {
	h := &handlers{b: b, d: d, fail: fail}
	site := httpx.RequireSiteHost(d.Site, fail)
	me := e.Group("/v1/me", h.session(), httpx.RequireSession(fail))
	me.POST("/checkout", site, h.handle(h.meCheckout))
	me.POST("/portal", site, h.handle(h.mePortal))
	e.POST("/v1/checkout/session", site, h.handle(h.publicCheckout))
	e.POST("/v1/stripe/webhook", h.handle(h.webhook))
}

// handle is a billing route: fn returns its error, and h.fail (the
// gateway's responder) answers it.
func (h *handlers) handle(fn httpx.Handler) gin.HandlerFunc { return httpx.Handle(h.fail, fn) }

// session loads the session cookie unless an earlier middleware already did.
func (h *handlers) session() gin.HandlerFunc {
	now := h.d.App.Now
	if now == nil {
		now = time.Now
	}
	load := httpx.Session(h.d.App.Queries.Identities, now)
	return func(c *gin.Context) {
		if _, ok := httpx.SessionOf(c); ok {
			c.Next()
			return
		}
		load(c)
	}
}

// returnURLs are the gateway's account page with checkout=success|cancel.
func (h *handlers) returnURLs() (success, cancel string) {
	page := h.accountPage()
	return withQuery(page, "checkout", "success"), withQuery(page, "checkout", "cancel")
}

// accountPage is /account at the gateway's public address (never the
// request's Host).
func (h *handlers) accountPage() string { return h.d.Site.BaseURL() + "/account" }

type checkoutBody struct {
	Plan  string `json:"plan"`
	Email string `json:"email"`
}

func bind(c *gin.Context, v *checkoutBody) error {
	raw, err := httpx.ReadJSON(c.Request.Body)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if f := httpx.UnknownField(err); f != "" {
			return domain.Invalid("unknown_field", f, "unknown field %q: the body takes only plan and email", f)
		}
		return domain.Invalid("invalid_json", "body", "the body must be a JSON object like {\"plan\":\"pro\"}: %v", err)
	}
	if v.Plan == "" {
		return domain.Invalid("plan_required", "plan", "plan is required: one of starter, pro, scale")
	}
	return nil
}

func (h *handlers) meCheckout(c *gin.Context) error {
	var body checkoutBody
	if err := bind(c, &body); err != nil {
		return err
	}
	plan, err := account.ParsePlan(body.Plan)
	if err != nil {
		return err
	}
	p, _ := httpx.SessionOf(c)
	success, cancel := h.returnURLs()
	s, err := h.b.core().Checkout(c.Request.Context(), billing.Account{ID: p.AccountID, Email: p.Email, Plan: p.Plan, StripeCustomerID: p.StripeCustomerID},
		plan, false, success, cancel)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, gin.H{"id": s.ID, "url": s.URL})
	return nil
}

func (h *handlers) mePortal(c *gin.Context) error {
	p, _ := httpx.SessionOf(c)
	s, err := h.b.core().Portal(c.Request.Context(), billing.Account{ID: p.AccountID, Email: p.Email, Plan: p.Plan, StripeCustomerID: p.StripeCustomerID},
		h.accountPage())
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, gin.H{"url": s.URL})
	return nil
}

func (h *handlers) publicCheckout(c *gin.Context) error {
	bypass, err := h.adminBypass(c)
	if err != nil {
		return err
	}
	var body checkoutBody
	if err := bind(c, &body); err != nil {
		return err
	}
	plan, err := account.ParsePlan(body.Plan)
	if err != nil {
		return err
	}
	email, err := account.NormalizeEmail(body.Email)
	if err != nil {
		return err
	}
	if err := h.b.core().Enabled(); err != nil {
		return err
	}
	ctx := c.Request.Context()
	info, err := h.b.cfg.Identities.AccountByEmail(ctx, email)
	if err != nil {
		return noAccount(err, email)
	}
	acct, err := h.b.cfg.Identities.Account(ctx, info.ID)
	if err != nil {
		return noAccount(err, email)
	}
	success, cancel := h.returnURLs()
	s, err := h.b.core().Checkout(ctx, billing.Account{ID: acct.ID, Email: acct.Email, Plan: acct.Plan, StripeCustomerID: acct.StripeCustomerID},
		plan, bypass, success, cancel)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, gin.H{"id": s.ID, "url": s.URL})
	return nil
}

func noAccount(err error, email string) error {
	if errors.Is(err, domain.ErrNotFound) {
		return domain.NotFound("account_not_found", "no account for %s: sign up on the account page first (GET /account)", email)
	}
	return err
}

// adminBypass reports whether the request carries the configured admin key.
// A key that is sent but wrong, or sent while no key is configured, is 403,
// so an operator learns at once that the bypass did not apply. The keys are
// compared as SHA-256 digests in constant time.
func (h *handlers) adminBypass(c *gin.Context) (bool, error) {
	got := c.GetHeader(AdminKeyHeader)
	if got == "" {
		return false, nil
	}
	want := ""
	if h.b != nil {
		want = h.b.cfg.AdminKey
	}
	if want == "" {
		return false, domain.Forbidden("admin_bypass_disabled", "the admin-key bypass is off on this server (ARR_ADMIN_KEY is unset)")
	}
	g, w := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(want))
	if subtle.ConstantTimeCompare(g[:], w[:]) != 1 {
		return false, domain.Forbidden("invalid_admin_key", "the "+AdminKeyHeader+" header does not match the configured admin key")
	}
	return true, nil
}
