package httpx

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"strings"
	"time"

	"github.com/arr-dev/arr/projections/identity"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/domain"
)

// SessionCookie is the name of the session cookie. Its value is the opaque
// session token; only its SHA-256 is stored.
const SessionCookie = "arr_session"

// CSRFField is the form field (and CSRFHeader the header) that carries the
// CSRF token on state-changing session requests.
const (
	CSRFField  = "csrf_token"
	CSRFHeader = "X-CSRF-Token"
)

// SessionLookup maps a session token to its live session.
type SessionLookup interface {
	SessionByToken(ctx context.Context, token string, now time.Time) (identity.SessionPrincipal, error)
}

const (
	sessionKey      = "arr.session"
	sessionTokenKey = "arr.session_token"
)

// Session loads the session named by the cookie, if any, onto the request;
// it never refuses. RequireSession refuses requests without one.
func Session(lookup SessionLookup, now func() time.Time) gin.HandlerFunc {
	return func(c *gin.Context) {
		token, err := c.Cookie(SessionCookie)
		if err != nil || token == "" || len(token) > 128 {
			c.Next()
			return
		}
		p, err := lookup.SessionByToken(c.Request.Context(), token, now())
		if err == nil {
			c.Set(sessionKey, p)
			c.Set(sessionTokenKey, token)
		}
		c.Next()
	}
}

// RequireSession refuses (401 through fail) a request Session found no live
// session for, and checks the CSRF token of every state-changing request
// (403 through fail).
func RequireSession(fail func(*gin.Context, error)) gin.HandlerFunc {
	return Handle(fail, func(c *gin.Context) error {
		if _, ok := SessionOf(c); !ok {
			return &domain.Error{Kind: domain.ErrUnauthenticated, Code: "no_session",
				Message: "not signed in: sign in on the account page, which sets the " + SessionCookie + " cookie"}
		}
		if !CheckCSRF(c) {
			return domain.Forbidden("csrf_token_invalid",
				"missing or wrong CSRF token: send the csrf_token of GET /v1/me (or of the account page) in the "+CSRFHeader+" header or the "+CSRFField+" form field")
		}
		return nil
	})
}

// SessionOf returns the session Session loaded, if any.
func SessionOf(c *gin.Context) (identity.SessionPrincipal, bool) {
	v, ok := c.Get(sessionKey)
	if !ok {
		return identity.SessionPrincipal{}, false
	}
	p, ok := v.(identity.SessionPrincipal)
	return p, ok
}

// CSRFToken is the request's CSRF token: an HMAC of a fixed label keyed by
// the session token, so it is tied to the session, needs no storage, and
// cannot be computed by a page that cannot read the HttpOnly cookie. Empty
// without a session.
func CSRFToken(c *gin.Context) string {
	return CSRFTokenFor(c.GetString(sessionTokenKey))
}

// CSRFTokenFor is the CSRF token of a session token, for the response that
// starts the session (the request carried no cookie yet). Empty for "".
func CSRFTokenFor(token string) string {
	if token == "" {
		return ""
	}
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte("arr csrf v1"))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// CheckCSRF reports whether a request may proceed: safe methods always, other
// methods only with the session's CSRF token in the header or form field.
func CheckCSRF(c *gin.Context) bool {
	switch c.Request.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return true
	}
	want := CSRFToken(c)
	got := c.GetHeader(CSRFHeader)
	if got == "" {
		got = c.PostForm(CSRFField)
	}
	return want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// SetSessionCookie sets the session cookie: HttpOnly, SameSite=Lax, Secure
// when the request came over TLS (directly or through a trusted proxy that
// says so).
func SetSessionCookie(c *gin.Context, token string, expires time.Time) {
	http.SetCookie(c.Writer, &http.Cookie{
		Name: SessionCookie, Value: token, Path: "/", Expires: expires, MaxAge: int(time.Until(expires).Seconds()),
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: IsTLS(c),
	})
}

// ClearSessionCookie removes the session cookie.
func ClearSessionCookie(c *gin.Context) {
	http.SetCookie(c.Writer, &http.Cookie{Name: SessionCookie, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: IsTLS(c)})
}

// IsTLS reports whether the client reached us over TLS: directly, or
// through a trusted proxy (ViaTrustedProxy) whose X-Forwarded-Proto is
// https. The header of any other peer is ignored.
func IsTLS(c *gin.Context) bool {
	return c.Request.TLS != nil || ViaTrustedProxy(c) && strings.EqualFold(forwarded(c, "X-Forwarded-Proto"), "https")
}
