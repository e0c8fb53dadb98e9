package httpx_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/arr-dev/arr/projections/identity"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/readapi/httpx"
)

// oneKey authenticates the secret "good" only.
type oneKey struct{ account uuid.UUID }

func (k oneKey) Authenticate(_ context.Context, secret string, _ account.Service) (identity.Principal, error) {
	if secret != "good" {
		return identity.Principal{}, &domain.Error{Kind: domain.ErrUnauthenticated, Code: "invalid_api_key", Message: "bad key"}
	}
	return identity.Principal{AccountID: k.account}, nil
}

// TestOptionalKeyAuth: no key passes without a principal, a valid key
// passes with one, and a key that is sent but invalid is refused as by
// KeyAuth.
func TestOptionalKeyAuth(t *testing.T) {
	gin.SetMode(gin.TestMode)
	acct := uuid.New()
	auth := oneKey{account: acct}
	fail := func(c *gin.Context, err error) {
		p := httpx.ProblemOf(err)
		c.AbortWithStatusJSON(p.Status, gin.H{"code": p.Code})
	}
	cases := []struct {
		name     string
		required bool
		header   string
		status   int
		who      string
	}{
		{"optional, no key", false, "", http.StatusOK, "nobody"},
		{"optional, another scheme", false, "Basic Zm9vOmJhcg==", http.StatusOK, "nobody"},
		{"optional, valid key", false, "Bearer good", http.StatusOK, acct.String()},
		{"optional, invalid key", false, "Bearer bad", http.StatusUnauthorized, ""},
		{"required, no key", true, "", http.StatusUnauthorized, ""},
		{"required, valid key", true, "Bearer good", http.StatusOK, acct.String()},
		{"required, invalid key", true, "Bearer bad", http.StatusUnauthorized, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mw := httpx.OptionalKeyAuth(auth, account.Gateway, false, fail)
			if tc.required {
				mw = httpx.KeyAuth(auth, account.Gateway, false, fail)
			}
			e := gin.New()
			e.GET("/", mw, func(c *gin.Context) {
				who := "nobody"
				if p, ok := httpx.PrincipalOf(c); ok {
					who = p.AccountID.String()
				}
				c.String(http.StatusOK, who)
			})
			req := httptest.NewRequest(http.MethodGet, "/", nil)
			if tc.header != "" {
				req.Header.Set("Authorization", tc.header)
			}
			rec := httptest.NewRecorder()
			e.ServeHTTP(rec, req)
			if rec.Code != tc.status || (tc.who != "" && rec.Body.String() != tc.who) {
				t.Fatalf("%d %q, want %d %q", rec.Code, rec.Body.String(), tc.status, tc.who)
			}
			if rec.Code == http.StatusUnauthorized && rec.Header().Get("WWW-Authenticate") == "" {
				t.Fatal("a 401 without WWW-Authenticate")
			}
		})
	}
}

// TestConflictingKeys: two different keys in Authorization and X-API-Key
// are a 400 naming both headers (RFC 6750's invalid_request), never
// answered as either account; the same key in both is accepted; where
// X-API-Key is not a key header, it is not read.
func TestConflictingKeys(t *testing.T) {
	gin.SetMode(gin.TestMode)
	fail := func(c *gin.Context, err error) {
		p := httpx.ProblemOf(err)
		c.AbortWithStatusJSON(p.Status, gin.H{"code": p.Code, "message": p.Message})
	}
	cases := []struct {
		name         string
		xAPIKey      bool
		bearer, x    string
		status       int
		authenticate string
	}{
		{"two different keys", true, "good", "other", http.StatusBadRequest, `error="invalid_request"`},
		{"a wrong and a good key", true, "bad", "good", http.StatusBadRequest, `error="invalid_request"`},
		{"the same key twice", true, "good", "good", http.StatusOK, ""},
		{"X-API-Key alone", true, "", "good", http.StatusOK, ""},
		{"X-API-Key not read on this service", false, "good", "other", http.StatusOK, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := gin.New()
			e.GET("/", httpx.KeyAuth(oneKey{account: uuid.New()}, account.Records, tc.xAPIKey, fail), func(c *gin.Context) { c.String(http.StatusOK, "ok") })
			req := httptest.NewRequest(http.MethodGet, "/", nil)
			if tc.bearer != "" {
				req.Header.Set("Authorization", "Bearer "+tc.bearer)
			}
			req.Header.Set("X-API-Key", tc.x)
			rec := httptest.NewRecorder()
			e.ServeHTTP(rec, req)
			if rec.Code != tc.status || !strings.Contains(rec.Header().Get("WWW-Authenticate"), tc.authenticate) {
				t.Fatalf("%d %s (WWW-Authenticate %q), want %d", rec.Code, rec.Body, rec.Header().Get("WWW-Authenticate"), tc.status)
			}
			if rec.Code == http.StatusBadRequest && (!strings.Contains(rec.Body.String(), "conflicting_api_keys") ||
				!strings.Contains(rec.Body.String(), "Authorization") || !strings.Contains(rec.Body.String(), "X-API-Key")) {
				t.Fatalf("the 400 does not name both headers: %s", rec.Body)
			}
		})
	}
}

// revocable authenticates "good" until it is revoked.
type revocable struct {
	key     uuid.UUID
	revoked chan struct{}
}

func (k revocable) Authenticate(_ context.Context, secret string, _ account.Service) (identity.Principal, error) {
	select {
	case <-k.revoked:
		return identity.Principal{}, &domain.Error{Kind: domain.ErrUnauthenticated, Code: "invalid_api_key", Message: "revoked"}
	default:
	}
	if secret != "good" {
		return identity.Principal{}, &domain.Error{Kind: domain.ErrUnauthenticated, Code: "invalid_api_key", Message: "bad key"}
	}
	return identity.Principal{KeyID: k.key}, nil
}

// TestReauthenticate: a request admitted by KeyAuth checks its key again
// through the same Authenticator: nil while it is in force, 401's error
// once it is revoked; a request without a key has nothing to check.
func TestReauthenticate(t *testing.T) {
	gin.SetMode(gin.TestMode)
	auth := revocable{key: uuid.New(), revoked: make(chan struct{})}
	fail := func(c *gin.Context, err error) { c.AbortWithStatus(httpx.ProblemOf(err).Status) }
	var before, after error
	e := gin.New()
	e.GET("/", httpx.OptionalKeyAuth(auth, account.Records, false, fail), func(c *gin.Context) {
		before = httpx.Reauthenticate(c, c)
		if _, ok := httpx.PrincipalOf(c); ok {
			close(auth.revoked)
		}
		after = httpx.Reauthenticate(c, c)
	})
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Header.Set("Authorization", "Bearer good")
	e.ServeHTTP(httptest.NewRecorder(), r)
	if before != nil || httpx.ProblemOf(after).Status != http.StatusUnauthorized {
		t.Fatalf("before the revocation %v, after it %v; want nil, then a 401", before, after)
	}
	e.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
	if before != nil || after != nil {
		t.Fatalf("without a key: %v, %v; want nothing to check", before, after)
	}
}
