package accountweb

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/arr-dev/arr/projections/identity"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/readapi/httpx"
)

type signinPage struct {
	base
	Email, Error, Notice string
}

// home is GET /account: the account page when signed in, else the form.
func (w *web) home(c *gin.Context) error {
	if p, ok := httpx.SessionOf(c); ok {
		n := notices[c.Query("notice")]
		if v := c.Query("checkout"); v != "" { // the return URLs of POST /v1/me/checkout
			n = notices["checkout_"+map[string]string{"success": "success", "cancel": "cancelled"}[v]]
		}
		return w.accountPage(c, http.StatusOK, p, accountView{Notice: n})
	}
	b := w.base(c, "Sign in")
	b.CSRF = preSessionToken(c)
	w.render(c, http.StatusOK, "signin", signinPage{base: b, Notice: notices[c.Query("notice")]})
	return nil
}

// notices are the fixed messages a redirect may ask the page to show.
var notices = map[string]string{
	"revoked":            "The key is revoked: it stopped working at once.",
	"signed_out":         "You are signed out.",
	"checkout_success":   "Thank you! Your plan changes as soon as Stripe confirms the payment.",
	"checkout_cancelled": "Checkout was cancelled; nothing was charged.",
}

func (w *web) signinForm(c *gin.Context, status int, email, errMsg string) {
	b := w.base(c, "Sign in")
	b.CSRF = preSessionToken(c)
	w.render(c, status, "signin", signinPage{base: b, Email: email, Error: errMsg})
}

// requestLink is POST /account/signin. Its answer is the same whether or
// not the address has an account.
func (w *web) requestLink(c *gin.Context) error {
	if !checkPreSession(c) {
		return errFormExpired
	}
	email := c.PostForm("email")
	link, err := w.d.App.Commands.RequestSignIn.Handle(c.Request.Context(), commands.RequestSignIn{
		Email: email, Service: w.svc, Metadata: w.metadata(c, "account-page:"+string(w.svc))})
	if isKind(err, domain.ErrInvalid) {
		w.signinForm(c, http.StatusBadRequest, email, httpx.ProblemOf(err).Message)
		return nil
	}
	if err != nil {
		return err
	}
	if w.d.App.Mailer == nil {
		return errNoMailer
	}
	q := url.Values{"link": {link.LinkID.String()}, "token": {link.Token}}
	verify := w.baseURL() + "/account/signin/verify?" + q.Encode()
	text := "Hello,\n\nsomeone (hopefully you) asked to sign in to arr " + string(w.svc) + " with this address.\n" +
		"Open this link to sign in; if the address has no account yet, it creates a free one:\n\n" +
		verify + "\n\nThe link works once and expires at " + link.ExpiresAt.UTC().Format("15:04 MST on 2 Jan 2006") + " (15 minutes).\n" +
		"If you did not ask for it, ignore this mail: nothing happens without the link.\n"
	ctx, cancel := context.WithTimeout(c.Request.Context(), 30*time.Second)
	defer cancel()
	if err := w.d.App.Mailer.Send(ctx, link.Email, "Your arr "+string(w.svc)+" sign-in link", text); err != nil {
		w.log.Error("sending a sign-in link", "err", err, "request_id", c.GetString("request_id"))
		w.message(c, http.StatusServiceUnavailable, "The mail could not be sent",
			"We could not send the sign-in mail just now. Please try again in a minute.")
		return nil
	}
	b := w.base(c, "Check your mail")
	w.render(c, http.StatusOK, "sent", signinPage{base: b, Email: link.Email})
	return nil
}

type confirmPage struct {
	base
	Link, Token string
}

// invalidLink is the page of a link that is malformed, used or expired.
func (w *web) invalidLink(c *gin.Context) {
	w.message(c, http.StatusBadRequest, "This sign-in link does not work",
		"The link is invalid, was already used, or is more than 15 minutes old. Each link works once. Ask for a new one on the sign-in page.")
}

// confirmPage is GET /account/signin/verify: a page whose button uses the
// link, so that mail scanners that fetch links do not use it up.
func (w *web) confirmPage(c *gin.Context) error {
	link, token := c.Query("link"), c.Query("token")
	if link == "" || token == "" || len(link) > 64 || len(token) > 128 {
		w.invalidLink(c)
		return nil
	}
	b := w.base(c, "Confirm sign-in")
	b.CSRF = preSessionToken(c)
	w.render(c, http.StatusOK, "confirm", confirmPage{base: b, Link: link, Token: token})
	return nil
}

// completeSignIn is POST /account/signin/verify: it uses the link, sets the
// session cookie, and shows the account page, with the first gateway key
// when the sign-in was a gateway sign-up.
func (w *web) completeSignIn(c *gin.Context) error {
	if !checkPreSession(c) {
		return errFormExpired
	}
	ctx := c.Request.Context()
	res, err := w.d.App.Commands.CompleteSignIn.Handle(ctx, commands.CompleteSignIn{
		LinkID: c.PostForm("link"), Token: c.PostForm("token"), Metadata: w.metadata(c, "account-page:"+string(w.svc))})
	if isKind(err, domain.ErrUnauthenticated) || isKind(err, domain.ErrNotFound) || isKind(err, domain.ErrConcurrency) {
		w.invalidLink(c)
		return nil
	}
	if err != nil {
		return err
	}
	// The session must be readable before the browser comes back with it.
	if err := w.d.App.WaitFor(ctx, identity.Name, res.Position); err != nil {
		return err
	}
	httpx.SetSessionCookie(c, res.SessionToken, res.ExpiresAt)
	if res.FirstKey == nil {
		c.Redirect(http.StatusSeeOther, "/account")
		return nil
	}
	acct, err := w.d.App.Queries.Identities.Account(ctx, res.AccountID)
	if err != nil {
		return err
	}
	p := identity.SessionPrincipal{SessionID: res.SessionID, AccountID: res.AccountID, Email: res.Email,
		Plan: acct.Plan, Service: res.Service, StripeCustomerID: acct.StripeCustomerID, ExpiresAt: res.ExpiresAt}
	k := res.FirstKey
	return w.accountPage(c, http.StatusOK, p, accountView{
		csrf: httpx.CSRFTokenFor(res.SessionToken), FirstKey: true,
		NewKey: &newKey{Name: k.Name, Secret: k.Secret},
	})
}

// signOut is POST /account/signout: it ends the session (checking the CSRF
// token) and clears the cookie; without a live session it only clears the
// cookie.
func (w *web) signOut(c *gin.Context) error {
	p, ok := httpx.SessionOf(c)
	if ok {
		if !httpx.CheckCSRF(c) {
			return domain.Forbidden("csrf_token_invalid", "missing or wrong CSRF token")
		}
		pos, err := w.d.App.Commands.EndSession.Handle(c.Request.Context(), commands.EndSession{
			SessionID: p.SessionID, Metadata: w.metadata(c, "session:"+p.SessionID.String())})
		if err != nil {
			return err
		}
		if err := w.d.App.WaitFor(c.Request.Context(), identity.Name, pos); err != nil {
			return err
		}
	}
	httpx.ClearSessionCookie(c)
	c.Redirect(http.StatusSeeOther, "/account?notice=signed_out")
	return nil
}
