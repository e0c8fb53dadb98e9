package accountweb

import (
	"net/http"
	"net/url"

	"github.com/arr-dev/arr/projections/identity"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/commands/billing"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/readapi/httpx"
)

var errNoBilling = &domain.Error{Kind: domain.ErrUnavailable, Code: "billing_unavailable",
	Message: "billing is not configured on this server"}

func billingAccount(p identity.SessionPrincipal) billing.Account {
	return billing.Account{ID: p.AccountID, Email: p.Email, Plan: p.Plan, StripeCustomerID: p.StripeCustomerID}
}

// redirectOut sends the browser to a hosted payment page.
func (w *web) redirectOut(c *gin.Context, p identity.SessionPrincipal, target string, err error) error {
	if isKind(err, domain.ErrInvalid) || isKind(err, domain.ErrConflict) {
		pr := httpx.ProblemOf(err)
		return w.accountPage(c, pr.Status, p, accountView{Error: pr.Message})
	}
	if err != nil {
		return err
	}
	u, perr := url.Parse(target)
	if perr != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		w.log.Error("billing returned an unusable URL", "request_id", c.GetString("request_id"))
		return errNoBilling
	}
	c.Redirect(http.StatusSeeOther, target)
	return nil
}

// upgrade is POST /account/upgrade: a Checkout Session for a dearer
// self-serve plan, then a redirect to Stripe.
func (w *web) upgrade(c *gin.Context) error {
	p, _ := httpx.SessionOf(c)
	plan, err := account.ParsePlan(c.PostForm("plan"))
	if err != nil {
		return w.accountPage(c, http.StatusBadRequest, p, accountView{Error: httpx.ProblemOf(err).Message})
	}
	if o := plan.Offer(); !o.SelfServe || plan.Rank() <= p.Plan.Rank() {
		return w.accountPage(c, http.StatusBadRequest, p, accountView{Error: "Choose a self-serve plan above your current one (" + p.Plan.Offer().Title + ")."})
	}
	if w.d.App.Billing.Enabled() != nil {
		return errNoBilling
	}
	base := w.baseURL() + "/account?notice="
	s, err := w.d.App.Billing.Checkout(c.Request.Context(), billingAccount(p), plan, false, base+"checkout_success", base+"checkout_cancelled")
	return w.redirectOut(c, p, s.URL, err)
}

// portal is POST /account/billing: the Stripe billing portal of the
// account's customer.
func (w *web) portal(c *gin.Context) error {
	p, _ := httpx.SessionOf(c)
	if w.d.App.Billing.Enabled() != nil {
		return errNoBilling
	}
	if p.StripeCustomerID == "" {
		return w.accountPage(c, http.StatusConflict, p, accountView{Error: "There is no billing account yet: it is created with your first upgrade."})
	}
	s, err := w.d.App.Billing.Portal(c.Request.Context(), billingAccount(p), w.baseURL()+"/account")
	return w.redirectOut(c, p, s.URL, err)
}
