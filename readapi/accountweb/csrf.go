package accountweb

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/readapi/httpx"
)

// formCookie carries the CSRF token of the forms shown before sign-in (the
// e-mail form and the sign-in confirmation): the page puts the same random
// value in a hidden field, and a POST must bring both (double submit). A
// cross-site form cannot read the cookie, and SameSite=Lax keeps the
// browser from sending it with a cross-site POST.
const formCookie = "arr_form"

// preSessionToken returns the browser's form token, setting a new one when
// it has none.
func preSessionToken(c *gin.Context) string {
	if v, err := c.Cookie(formCookie); err == nil && len(v) == 43 {
		return v
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	v := base64.RawURLEncoding.EncodeToString(b)
	http.SetCookie(c.Writer, &http.Cookie{Name: formCookie, Value: v, Path: "/account", MaxAge: 24 * 3600,
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: httpx.IsTLS(c)})
	return v
}

// checkPreSession reports whether a POST carries the form token of its
// cookie.
func checkPreSession(c *gin.Context) bool {
	v, err := c.Cookie(formCookie)
	got := c.PostForm(httpx.CSRFField)
	return err == nil && v != "" && subtle.ConstantTimeCompare([]byte(v), []byte(got)) == 1
}

var errFormExpired = domain.Forbidden("form_expired", "the form was not sent from this site's page, or it is too old; reload the page and try again")
