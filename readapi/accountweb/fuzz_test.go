package accountweb_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/domain/signin"
	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/readapi/httpx"
)

// FuzzSignInForm: the sign-in form (POST /account/signin, form-encoded,
// parsed by net/http as the handler's c.PostForm does) is refused with a
// 4xx, or its SignInRequested event can be stored. The e-mail address is
// the only field that reaches the event.
func FuzzSignInForm(f *testing.F) {
	for _, s := range []string{"email=a%40b.example", "email=a%00%40b.example", "email=%ff%40b.example", "email=A%40B.example&csrf=x",
		"email=%22a+b%22%40c.example", "email=a%40b.example%0d%0aBcc%3A+x%40y.example", "email=", "email=a%40b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		req := httptest.NewRequest(http.MethodPost, "/account/signin", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		_ = req.ParseForm() // a malformed pair is dropped, as gin's PostForm does
		email, err := account.NormalizeEmail(req.PostForm.Get("email"))
		if err != nil {
			if !errors.Is(err, domain.ErrInvalid) || httpx.ProblemOf(err).Status != http.StatusBadRequest {
				t.Fatalf("refused with %v, not a 400", err)
			}
			return
		}
		if strings.ContainsAny(email, "\r\n") {
			t.Fatalf("accepted an address with a line break (mail header injection): %q", email)
		}
		evs, err := signin.NewLink(uuid.New()).Request(email, string(account.Gateway), strings.Repeat("0", 64), time.Unix(0, 0))
		if err != nil {
			t.Fatal(err)
		}
		ne, err := eventstore.EncodeAll(eventstore.Metadata{}, evs...)
		if err != nil {
			t.Fatal(err)
		}
		if err := (eventstore.Append{StreamID: "signin-fuzz", Events: ne}).Validate(true); err != nil {
			t.Fatalf("accepted %q, but its event cannot be stored: %v", email, err)
		}
	})
}
