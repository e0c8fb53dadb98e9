package httpx

import (
	"context"
	"net/http"
	"strings"

	"github.com/arr-dev/arr/projections/identity"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/account"
)

// Authenticator maps a presented secret to its principal.
type Authenticator interface {
	Authenticate(ctx context.Context, secret string, svc account.Service) (identity.Principal, error)
}

const principalKey = "arr.principal"

// KeyAuth requires a valid API key of service svc, sent as
// "Authorization: Bearer <key>" or, when allowXAPIKey, as "X-API-Key: <key>".
// Failures go to fail (the service's error responder) with an error of kind
// domain.ErrUnauthenticated; two different keys in the two headers are a
// 400 (conflicting_api_keys, RFC 6750's invalid_request: more than one
// way of sending a credential), since arr cannot tell which one the caller
// meant to be charged. The same key in both headers is accepted. KeyAuth
// reads no body: it runs before the handler, so a request without a valid
// key is answered without its body being read (see ProblemFor).
func KeyAuth(auth Authenticator, svc account.Service, allowXAPIKey bool, fail func(*gin.Context, error)) gin.HandlerFunc {
	return keyAuth(auth, svc, allowXAPIKey, true, fail)
}

// OptionalKeyAuth is KeyAuth for routes that answer without a key too: a
// request that sends no key goes on without a principal (PrincipalOf
// reports false), while a key that is sent must be valid — a wrong,
// revoked or other service's key is refused as by KeyAuth (401), never
// treated as no key.
func OptionalKeyAuth(auth Authenticator, svc account.Service, allowXAPIKey bool, fail func(*gin.Context, error)) gin.HandlerFunc {
	return keyAuth(auth, svc, allowXAPIKey, false, fail)
}

func keyAuth(auth Authenticator, svc account.Service, allowXAPIKey, required bool, fail func(*gin.Context, error)) gin.HandlerFunc {
	how := "Authorization: Bearer <key>"
	if allowXAPIKey {
		how += " or X-API-Key: <key>"
	}
	realm := `Bearer realm="arr ` + string(svc) + `"`
	return Handle(fail, func(c *gin.Context) error {
		secret := bearer(c.GetHeader("Authorization"))
		if allowXAPIKey {
			x := strings.TrimSpace(c.GetHeader("X-API-Key"))
			switch {
			case secret == "":
				secret = x
			case x != "" && x != secret:
				c.Header("WWW-Authenticate", realm+`, error="invalid_request"`)
				return &domain.Error{Kind: domain.ErrInvalid, Code: "conflicting_api_keys",
					Message: "the Authorization: Bearer header and the X-API-Key header carry two different API keys; send one key, in one of the two headers"}
			}
		}
		if secret == "" && !required {
			return nil
		}
		if secret == "" {
			c.Header("WWW-Authenticate", realm)
			return &domain.Error{Kind: domain.ErrUnauthenticated, Code: "missing_api_key",
				Message: "no API key: send " + how + "; create a key on the account page"}
		}
		p, err := auth.Authenticate(c.Request.Context(), secret, svc)
		if err != nil {
			c.Header("WWW-Authenticate", realm+`, error="invalid_token"`)
			return err
		}
		c.Set(principalKey, p)
		c.Set(recheckKey, recheck(func(ctx context.Context) error {
			// No rider: a check counts nothing (identity.Rider).
			q, err := auth.Authenticate(identity.WithRider(ctx, nil), secret, svc)
			if err == nil && q.KeyID != p.KeyID {
				err = &domain.Error{Kind: domain.ErrUnauthenticated, Code: "invalid_api_key", Message: "the API key is no longer the one this request was admitted with"}
			}
			return err
		}))
		return nil
	})
}

const recheckKey = "arr.principal.recheck"

// recheck re-authenticates a request's key (KeyAuth keeps one per keyed
// request; the secret stays inside it).
type recheck func(context.Context) error

// Reauthenticate checks that the key the request was admitted with
// (KeyAuth, OptionalKeyAuth) is still in force, through the same
// Authenticator and so the same identity read model: nil while it is; the
// Authenticator's error (kind domain.ErrUnauthenticated for a key revoked,
// expired or changed since) once it is not. A request that runs long (a
// bulk export) calls it as it goes, so a revoked key stops it. A request
// without a key has nothing to check: nil. Safe for concurrent use.
func Reauthenticate(ctx context.Context, c *gin.Context) error {
	v, _ := c.Get(recheckKey)
	f, ok := v.(recheck)
	if !ok {
		return nil
	}
	return f(ctx)
}

func bearer(h string) string {
	const p = "bearer "
	if len(h) > len(p) && strings.EqualFold(h[:len(p)], p) {
		return strings.TrimSpace(h[len(p):])
	}
	return ""
}

// PrincipalOf returns the principal KeyAuth or OptionalKeyAuth stored on
// the request; false when there is none.
func PrincipalOf(c *gin.Context) (identity.Principal, bool) {
	v, ok := c.Get(principalKey)
	if !ok {
		return identity.Principal{}, false
	}
	p, ok := v.(identity.Principal)
	return p, ok
}

// KeyObject is the JSON body that describes the calling key (GET …/key):
// never the secret, never its hash.
func KeyObject(p identity.Principal) gin.H {
	return gin.H{
		"object":     "api_key",
		"id":         p.KeyID,
		"service":    p.Service,
		"prefix":     p.Prefix,
		"hint":       p.Hint,
		"name":       p.Name,
		"created_at": p.IssuedAt,
		"account":    gin.H{"id": p.AccountID, "email": p.Email, "plan": p.Plan},
	}
}

// CurrentKey answers GET …/key on every service: the key the request was
// made with (KeyAuth must run first).
func CurrentKey(c *gin.Context) {
	p, _ := PrincipalOf(c)
	c.JSON(http.StatusOK, KeyObject(p))
}
