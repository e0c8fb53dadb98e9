package accountweb

import (
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"errors"
	"html/template"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/readapi/httpx"
)

//go:embed templates/*.html
var templateFiles embed.FS

// css is the pages' only style sheet, inline; the Content-Security-Policy
// allows exactly this text by its hash.
const css = `*{box-sizing:border-box}body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Liberation Sans",sans-serif;color:#1d2330;background:#f6f7f9}` +
	`header,footer{display:flex;justify-content:space-between;align-items:center;max-width:52rem;margin:0 auto;padding:1rem}` +
	`footer{color:#667;font-size:.85rem}.brand{font-weight:700;color:#1d2330;text-decoration:none}.brand span{color:#3b6fd4}` +
	`main{max-width:52rem;margin:0 auto;padding:0 1rem 2rem}section{background:#fff;border:1px solid #dde1e7;border-radius:8px;padding:1rem 1.25rem;margin:1rem 0}` +
	`h1{font-size:1.6rem}h2{font-size:1.15rem;margin-top:0}label{display:block;font-weight:600;margin:.5rem 0 .25rem}` +
	`input[type=email],input[type=text],select{font:inherit;padding:.45rem .6rem;border:1px solid #b9c0cc;border-radius:6px;min-width:16rem;max-width:100%}` +
	`button{font:inherit;padding:.45rem .9rem;border:0;border-radius:6px;background:#3b6fd4;color:#fff;cursor:pointer;margin:.5rem 0}` +
	`button.secondary{background:#e8ecf3;color:#1d2330}button.danger{background:#c23b3b;padding:.2rem .6rem;margin:0}button.link{background:none;color:#3b6fd4;padding:0;margin:0}` +
	`.inline{display:inline}.row label{display:inline-block;margin-right:.5rem}.muted{color:#667;font-size:.9rem}` +
	`.error{color:#9b1c1c;background:#fde8e8;padding:.5rem .75rem;border-radius:6px}.notice{color:#1e5b2e;background:#e6f4ea;padding:.5rem .75rem;border-radius:6px}` +
	`.secret{border:2px solid #e0a800;background:#fffbea}.secret code{font-size:1rem;word-break:break-all;background:#fff;padding:.3rem .5rem;border:1px solid #e0a800;border-radius:4px;display:inline-block}` +
	`table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.4rem .5rem;border-bottom:1px solid #eef0f3}tr.revoked td{color:#8a8f98}` +
	`dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem}dt{font-weight:600}dd{margin:0}svg{display:block;max-width:100%;height:auto}`

// csp forbids every script, every external load and framing; the one
// style element is allowed by hash.
var csp = func() string {
	sum := sha256.Sum256([]byte(css))
	return "default-src 'none'; style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'; img-src 'self' data:; " +
		"base-uri 'none'; frame-ancestors 'none'"
}()

// base is what every page's template gets.
type base struct {
	Title    string
	Service  account.Service
	CSS      template.CSS
	CSRF     string
	SignedIn bool
}

func parseTemplates() (map[string]*template.Template, error) {
	layout, err := template.ParseFS(templateFiles, "templates/layout.html")
	if err != nil {
		return nil, err
	}
	out := map[string]*template.Template{}
	for _, name := range []string{"signin", "sent", "confirm", "message", "account"} {
		t, err := template.Must(layout.Clone()).ParseFS(templateFiles, "templates/"+name+".html")
		if err != nil {
			return nil, err
		}
		out[name] = t
	}
	return out, nil
}

// securityHeaders go on every account page (X-Content-Type-Options:
// nosniff is on every response of the service: httpx.Serve).
func securityHeaders(c *gin.Context) {
	h := c.Writer.Header()
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
	c.Next()
}

// render writes a page; a template error is logged and becomes a bare 500.
func (w *web) render(c *gin.Context, status int, name string, data any) {
	var buf strings.Builder
	if err := w.tmpl[name].ExecuteTemplate(&buf, "layout", data); err != nil {
		w.log.Error("rendering the account page", "page", name, "err", err, "request_id", c.GetString("request_id"))
		c.Data(http.StatusInternalServerError, "text/plain; charset=utf-8", []byte("internal error"))
		return
	}
	c.Data(status, "text/html; charset=utf-8", []byte(buf.String()))
}

func (w *web) base(c *gin.Context, title string) base {
	_, signed := httpx.SessionOf(c)
	return base{Title: title, Service: w.svc, CSS: template.CSS(css), CSRF: httpx.CSRFToken(c), SignedIn: signed}
}

type messagePage struct {
	base
	Heading, Message string
	IsError          bool
}

// message renders a page with one message.
func (w *web) message(c *gin.Context, status int, heading, msg string) {
	p := messagePage{base: w.base(c, heading), Heading: heading, Message: msg, IsError: status >= 400}
	w.render(c, status, "message", p)
}

// handle is an account page's route: h returns its error, and fail
// renders it.
func (w *web) handle(h httpx.Handler) gin.HandlerFunc { return httpx.Handle(w.fail, h) }

// fail renders an error as a page: the status and message of
// httpx.ProblemFor (which records the cause for the access log and sets
// Retry-After on a 503), with headings people understand. It is the pages'
// error responder, httpx.RequireSession's included.
func (w *web) fail(c *gin.Context, err error) {
	p := httpx.ProblemFor(c, err)
	heading := map[int]string{
		http.StatusBadRequest: "That did not work", http.StatusUnauthorized: "You are not signed in",
		http.StatusForbidden: "This form has expired", http.StatusNotFound: "Not found",
		http.StatusConflict: "That did not work", http.StatusServiceUnavailable: "Temporarily unavailable",
		http.StatusTooManyRequests: "Too many requests", http.StatusMisdirectedRequest: "Wrong address",
	}[p.Status]
	msg := p.Message
	switch {
	case p.Status == http.StatusUnauthorized:
		msg = "Your session has ended or you have not signed in yet. Sign in again on the account page."
	case p.Code == "csrf_token_invalid" || p.Code == "form_expired":
		msg = "The form was not sent from this page, or it is too old. Go back to the account page, reload it and try again."
	case heading == "":
		heading = "Something went wrong"
	}
	c.Abort()
	w.message(c, p.Status, heading, msg)
}

func (w *web) metadata(c *gin.Context, actor string) commands.Metadata {
	return httpx.CommandMetadata(c, actor)
}

func (w *web) now() time.Time { return w.d.App.Now().UTC() }

// baseURL is where links in mail and Stripe's return URLs point: the
// service's configured public address, never anything the request says.
// Routes that use it run behind httpx.RequireSiteHost.
func (w *web) baseURL() string { return w.d.Site.BaseURL() }

var errNoMailer = &domain.Error{Kind: domain.ErrUnavailable, Code: "mail_unavailable", Message: "this server cannot send mail"}

// isKind reports whether err is of a domain kind.
func isKind(err, kind error) bool { return errors.Is(err, kind) }

// web serves one service's account pages. Safe for concurrent use.
type web struct {
	svc  account.Service
	d    httpx.Deps
	tmpl map[string]*template.Template
	log  *slog.Logger
}
