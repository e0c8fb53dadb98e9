package accountweb

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/readapi/httpx"
)

// Mount registers one service's account pages on r:
//
//	GET  /account                    the account page, or the sign-in form
//	POST /account/signin             send a magic link (same answer for any address)
//	GET  /account/signin/verify      confirmation page of a magic link (uses nothing)
//	POST /account/signin/verify      use the link: sign up or in, set the session cookie
//	POST /account/keys               mint a key (its secret shown once)
//	POST /account/keys/:id/revoke    revoke one of the account's keys of this service
//	POST /account/guardrails         set the account's or a gateway key's guardrails (gateway only)
//	POST /account/upgrade            start Stripe Checkout for a dearer plan
//	POST /account/billing            open the Stripe billing portal
//	POST /account/signout            end the session, clear the cookie
//
// The routes that build links (sign-in, upgrade, billing) answer only
// requests made to one of d.Site's hosts, and 421 to others.
func Mount(r gin.IRouter, svc account.Service, d httpx.Deps) error {
	if svc.KeyPrefix() == "" {
		return fmt.Errorf("accountweb: unknown service %q", svc)
	}
	if d.App.Queries.Identities == nil {
		return fmt.Errorf("accountweb: no identity read model")
	}
	tmpl, err := parseTemplates()
	if err != nil {
		return fmt.Errorf("accountweb: %w", err)
	}
	if d.App.Now == nil {
		d.App.Now = time.Now
	}
	w := &web{svc: svc, d: d, tmpl: tmpl, log: d.Logger}
	if w.log == nil {
		w.log = slog.New(slog.DiscardHandler)
	}
	site := httpx.RequireSiteHost(d.Site, w.fail)
	g := r.Group("/account", securityHeaders, httpx.Session(d.App.Queries.Identities, d.App.Now))
	g.GET("", w.handle(w.home))
	g.POST("/signin", site, d.Quota.SignInMail(w.fail), w.handle(w.requestLink))
	g.GET("/signin/verify", w.handle(w.confirmPage))
	g.POST("/signin/verify", w.handle(w.completeSignIn))
	g.POST("/signout", w.handle(w.signOut))
	s := g.Group("", httpx.RequireSession(w.fail))
	s.POST("/keys", w.handle(w.mintKey))
	s.POST("/keys/:id/revoke", w.handle(w.revokeKey))
	if svc == account.Gateway {
		s.POST("/guardrails", w.handle(w.setGuardrails))
	}
	s.POST("/upgrade", site, w.handle(w.upgrade))
	s.POST("/billing", site, w.handle(w.portal))
	return nil
}
