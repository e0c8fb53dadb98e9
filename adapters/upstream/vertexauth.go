package upstream

import (
	"bytes"
	"context"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"

	"github.com/arr-dev/arr/domain/routing"
)

// cloudPlatformScope is the OAuth2 scope of a Vertex AI call.
const cloudPlatformScope = "https://www.googleapis.com/auth/cloud-platform"

// googleTokenURI is the token endpoint of a key file without token_uri.
const googleTokenURI = "https://oauth2.googleapis.com/token"

// ErrToken: no access token could be had for a Vertex AI call (the token
// endpoint failed, refused the service account, or answered without an
// access token). Retryable, and counted by the model's breaker.
var ErrToken = errors.New("no Vertex AI access token")

// The bounds of what is read: a service-account key file is about 2 KiB,
// a token endpoint's answer well under 1 KiB.
const (
	maxServiceAccountFile = 64 << 10
	maxTokenAnswer        = 64 << 10
)

// tokenMargin: a token that expires within it is not used (a new one is
// fetched first), so none expires on its way to Vertex AI.
const tokenMargin = time.Minute

// vertexAuth is the access token of one credentials variable's service
// account, shared by every model that names the variable. There is no
// cached credential: each fetch reads the account afresh (a key rotated
// in the file is used by the next fetch), and a fetch that fails leaves
// no token, so the next call fetches again.
type vertexAuth struct {
	env string

	mu     sync.Mutex
	token  string
	expiry time.Time // zero: the endpoint gave none (used until Vertex AI refuses it)
	// fetch is the fetch under way (nil: none): calls that need a token
	// meanwhile wait for it, each no longer than its own context.
	fetch *tokenFetch
}

// tokenFetch is one fetch of a token: done is closed when it ends.
type tokenFetch struct {
	done  chan struct{}
	token string
	err   error
	// left: the fetching call's context ended first; the calls waiting
	// on it fetch anew rather than fail with it.
	left bool
}

// vertexAuth is the token holder of credentials variable env.
func (c *Client) vertexAuth(env string) *vertexAuth {
	c.mu.Lock()
	defer c.mu.Unlock()
	a, ok := c.auths[env]
	if !ok {
		a = &vertexAuth{env: env}
		c.auths[env] = a
	}
	return a
}

// accessToken is a token for a Vertex AI call to m: the one held while
// it is good, else a new one fetched within ctx (the call's, with its
// timeout). One fetch at a time per credentials variable: a call that
// comes meanwhile waits for it, but only as long as its own ctx lasts,
// and fetches itself when the fetching call left first. A failure is a
// retryable *Error: ErrNotConfigured (the account cannot be read:
// skipped, no breaker) or ErrToken.
func (c *Client) accessToken(ctx context.Context, m routing.Model, a *vertexAuth) (string, error) {
	fail := func(err error) (string, error) {
		return "", &Error{Model: m.ID, Retryable: true, Err: err}
	}
	for {
		a.mu.Lock()
		if a.token != "" && (a.expiry.IsZero() || time.Until(a.expiry) > tokenMargin) {
			tok := a.token
			a.mu.Unlock()
			return tok, nil
		}
		f := a.fetch
		if f == nil {
			f = &tokenFetch{done: make(chan struct{})}
			a.fetch = f
			a.mu.Unlock()
			tok, expiry, err := c.fetchToken(ctx, a.env)
			a.mu.Lock()
			a.fetch = nil
			if err == nil {
				a.token, a.expiry = tok, expiry
			}
			f.token, f.err, f.left = tok, err, err != nil && ctx.Err() != nil
			close(f.done)
			a.mu.Unlock()
			if err != nil {
				return fail(err)
			}
			return tok, nil
		}
		a.mu.Unlock()
		select {
		case <-ctx.Done():
			return fail(fmt.Errorf("%w: the call ended waiting for the token: %w", ErrToken, ctx.Err()))
		case <-f.done:
		}
		if f.left {
			continue
		}
		if f.err != nil {
			return fail(f.err)
		}
		return f.token, nil
	}
}

// forget drops tok (Vertex AI refused it: revoked, or the account's key
// rotated) if it is still the one held, so the next call fetches anew.
func (a *vertexAuth) forget(tok string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.token == tok {
		a.token, a.expiry = "", time.Time{}
	}
}

// fetchToken reads the service account of env (Config.ServiceAccount),
// checks it strictly (parseServiceAccount) and has golang.org/x/oauth2's
// JWT flow (google.JWTConfigFromJSON: a service account's key, never a
// browser or metadata flow) trade a signed assertion for an access token
// at its token_uri. The flow's HTTP client is the client's own transport
// with every request bound to ctx (the call's, with its timeout) and no
// redirects, so a hanging token endpoint holds no call past its deadline.
// The error is ErrNotConfigured or ErrToken, and never carries the
// variable's value or the file's text.
func (c *Client) fetchToken(ctx context.Context, env string) (string, time.Time, error) {
	data, err := c.cfg.ServiceAccount(env)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("%w: %v", ErrNotConfigured, err)
	}
	sa, err := parseServiceAccount(data)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("%w: the service account %s names: %v", ErrNotConfigured, env, err)
	}
	conf, err := google.JWTConfigFromJSON(data, cloudPlatformScope)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("%w: the service account %s names is not a key file golang.org/x/oauth2 reads", ErrNotConfigured, env)
	}
	conf.TokenURL = sa.tokenURI
	hc := &http.Client{Transport: boundTransport{ctx: ctx, next: c.http.Transport}, CheckRedirect: c.http.CheckRedirect}
	tok, err := conf.TokenSource(context.WithValue(ctx, oauth2.HTTPClient, hc)).Token()
	if err != nil {
		var re *oauth2.RetrieveError
		switch {
		case errors.As(err, &re) && re.Response != nil:
			_, _, why := tokenAnswer(re.Response.StatusCode, re.Body)
			return "", time.Time{}, fmt.Errorf("%w: the token endpoint of %s: %v", ErrToken, env, why)
		case ctx.Err() != nil:
			return "", time.Time{}, fmt.Errorf("%w: the token endpoint of %s: %w", ErrToken, env, ctx.Err())
		case strings.Contains(err.Error(), "private key"):
			return "", time.Time{}, fmt.Errorf("%w: the service account %s names has a private_key that is not an RSA key in PEM", ErrNotConfigured, env)
		}
		return "", time.Time{}, fmt.Errorf("%w: the token endpoint of %s did not answer with a token", ErrToken, env)
	}
	if why := usableToken(tok.AccessToken, tok.TokenType); why != nil {
		return "", time.Time{}, fmt.Errorf("%w: the token endpoint of %s: %v", ErrToken, env, why)
	}
	return tok.AccessToken, tok.Expiry, nil
}

// boundTransport sends every request within ctx: x/oauth2's JWT flow
// posts without a context of its own.
type boundTransport struct {
	ctx  context.Context
	next http.RoundTripper
}

func (b boundTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	next := b.next
	if next == nil {
		next = http.DefaultTransport
	}
	return next.RoundTrip(r.WithContext(b.ctx))
}

// usableToken says why a token endpoint's 200 is no usable bearer token
// (nil: it is one): empty, of another type, or not a header value.
func usableToken(token, typ string) error {
	switch {
	case token == "":
		return errors.New("the answer has no access_token")
	case !headerValue(token):
		return errors.New("the access_token is not printable ASCII of at most 4 KiB")
	case typ != "" && !strings.EqualFold(typ, "bearer"):
		return fmt.Errorf("the token is of type %q, not Bearer", printable(typ, 32))
	}
	return nil
}

// tokenAnswer is the access token and its lifetime (0: none given) of
// a token endpoint's answer with status, or why there is none: an OAuth2
// error (its code and description), or a 200 without a usable bearer
// token (empty, another type, or not a header value).
func tokenAnswer(status int, b []byte) (string, time.Duration, error) {
	var t struct {
		AccessToken string `json:"access_token"`
		TokenType   string `json:"token_type"`
		ExpiresIn   int64  `json:"expires_in"`
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	decodeErr := json.Unmarshal(b, &t)
	if status != http.StatusOK {
		if decodeErr != nil || t.Error == "" {
			return "", 0, fmt.Errorf("HTTP %d", status)
		}
		return "", 0, fmt.Errorf("HTTP %d: %s: %s", status, printable(t.Error, 64), printable(t.Description, 256))
	}
	if decodeErr != nil {
		return "", 0, errors.New("the answer is not a token object")
	}
	if err := usableToken(t.AccessToken, t.TokenType); err != nil {
		return "", 0, err
	}
	return t.AccessToken, time.Duration(min(max(t.ExpiresIn, 0), 1<<31)) * time.Second, nil
}

// printable is s cut to n bytes, its bytes outside printable ASCII as
// '?': an endpoint's text, safe in a log line.
func printable(s string, n int) string {
	if len(s) > n {
		s = s[:n]
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e {
			return '?'
		}
		return r
	}, s)
}

// serviceAccount is what a Vertex AI call needs of a service-account key
// file.
type serviceAccount struct {
	email    string
	keyID    string
	tokenURI string
}

// parseServiceAccount reads data strictly as a service-account key file:
// a JSON object of type "service_account" with client_email, an RSA
// private_key (PEM, PKCS #8 or PKCS #1) and an http(s) token_uri
// (Google's when absent). Anything else is refused, an OAuth client's
// file or one with an OAuth client block beside ("installed", "web") as
// well: no credential kind but a service account's key is ever used.
// The error says what is wrong, never what the file holds.
func parseServiceAccount(data []byte) (serviceAccount, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return serviceAccount{}, fmt.Errorf("a file that is not JSON (a syntax error at byte %d)", se.Offset)
		}
		return serviceAccount{}, errors.New("a file that is not a JSON object")
	}
	str := func(name string) (string, error) {
		raw, ok := fields[name]
		if !ok {
			return "", nil
		}
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return "", fmt.Errorf("a key file whose %s is not a string", name)
		}
		return s, nil
	}
	var sa serviceAccount
	var typ, key string
	for _, f := range []struct {
		name string
		to   *string
	}{{"type", &typ}, {"client_email", &sa.email}, {"private_key_id", &sa.keyID}, {"private_key", &key}, {"token_uri", &sa.tokenURI}} {
		v, err := str(f.name)
		if err != nil {
			return serviceAccount{}, err
		}
		*f.to = v
	}
	_, installed := fields["installed"]
	_, web := fields["web"]
	switch {
	case typ != "service_account":
		return serviceAccount{}, errors.New(`a file whose type is not "service_account"`)
	case installed || web:
		return serviceAccount{}, errors.New("a service account with an OAuth client block (installed or web): not a service-account key file")
	case sa.email == "":
		return serviceAccount{}, errors.New("a service account without client_email")
	case sa.tokenURI == "":
		sa.tokenURI = googleTokenURI
	}
	if u, err := url.Parse(sa.tokenURI); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return serviceAccount{}, errors.New("a service account whose token_uri is not an http(s) URL")
	}
	if _, err := x509Key(key); err != nil {
		return serviceAccount{}, err
	}
	return sa, nil
}

// x509Key is a service account's private_key, checked before
// x/oauth2 signs with it (whose errors would say less).
func x509Key(s string) (*rsa.PrivateKey, error) {
	block, _ := pem.Decode([]byte(s))
	if block == nil {
		return nil, errors.New("a service account whose private_key is not PEM")
	}
	if k, err := x509.ParsePKCS8PrivateKey(block.Bytes); err == nil {
		if rk, ok := k.(*rsa.PrivateKey); ok {
			return rk, nil
		}
		return nil, errors.New("a service account whose private_key is not an RSA key")
	}
	if k, err := x509.ParsePKCS1PrivateKey(block.Bytes); err == nil {
		return k, nil
	}
	return nil, errors.New("a service account whose private_key is neither a PKCS #8 nor a PKCS #1 RSA key")
}

// readServiceAccount is the default Config.ServiceAccount: the file the
// variable env names (its value read with key), at most 64 KiB. Its
// errors name the variable and what is wrong, never the value (which
// may be the key file's JSON itself, set where a path belongs).
func readServiceAccount(key func(string) string) func(string) ([]byte, error) {
	return func(env string) ([]byte, error) {
		path := key(env)
		switch {
		case path == "":
			return nil, fmt.Errorf("%s is unset", env)
		case strings.HasPrefix(strings.TrimSpace(path), "{"):
			return nil, fmt.Errorf("%s holds JSON, not the path of a service-account key file", env)
		}
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("the file %s names cannot be opened: %v", env, pathless(err))
		}
		defer f.Close()
		b, err := io.ReadAll(io.LimitReader(f, maxServiceAccountFile+1))
		switch {
		case err != nil:
			return nil, fmt.Errorf("the file %s names cannot be read: %v", env, pathless(err))
		case len(b) > maxServiceAccountFile:
			return nil, fmt.Errorf("the file %s names is over %d KiB: not a service-account key file", env, maxServiceAccountFile>>10)
		case len(bytes.TrimSpace(b)) == 0:
			return nil, fmt.Errorf("the file %s names is empty", env)
		}
		return b, nil
	}
}

// pathless is err without the path an *fs.PathError names ("no such
// file or directory", "permission denied").
func pathless(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
