package httpx_test

import (
	"context"
	"net/http"
	"net/http/httptest"
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
