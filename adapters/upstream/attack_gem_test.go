package upstream_test

// Attacks on the Gemini and Vertex AI upstreams (issue 40). Each test
// fails while the weakness it names is there. Every server is a
// loopback one the test starts; nothing resolves a name.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arr-dev/arr/adapters/upstream"
	"github.com/arr-dev/arr/adapters/upstream/upstreamtest"
	"github.com/arr-dev/arr/domain/chat"
	"github.com/arr-dev/arr/domain/routing"
)

// A careless operator sets the credentials variable to the service
// account's JSON itself (as GOOGLE_CREDENTIALS often is) instead of its
// path: the default ServiceAccount reads a file of that name, and the
// *PathError it wraps, "open {…"private_key":"-----BEGIN PRIVATE
// KEY-----…}: file name too long", is the Error's text, logged and
// traced: the private key in clear.
func TestAttackCredentialsValueLeaksPrivateKey(t *testing.T) {
	srv := upstreamtest.Start(t)
	sa, err := srv.ServiceAccount("arr-leak")
	if err != nil {
		t.Fatal(err)
	}
	m, _ := vertexModel(t, srv, "gemini-leak")
	c := geminiClient(t, 5, string(sa)) // SA's value is the JSON, not a path
	_, err = c.Do(context.Background(), m, upstream.Request{API: upstream.APIVertex, Body: geminiBody(t, &chat.Request{Messages: userMessage(chat.TextPart("x"))})})
	if err == nil {
		t.Fatal("a call with the JSON for a path succeeded")
	}
	if s := err.Error(); strings.Contains(s, "PRIVATE KEY") || strings.Contains(s, "private_key") {
		t.Fatalf("the error carries the service account's private key: %.200s…", s)
	}
}

// A credentials file whose type is service_account but which also has
// an "installed" (or "web") OAuth client block is taken by
// google.CredentialsFromJSONWithType as an OAuth client: the type check
// passes, then CredentialsFromJSONWithParams tries ConfigFromJSON first
// and builds a three-legged flow with no AuthorizationHandler, whose
// Token calls the nil handler: the call panics (the gateway's request
// goroutine dies) instead of the model being not configured.
func TestAttackServiceAccountWithOAuthClientPanics(t *testing.T) {
	srv := upstreamtest.Start(t)
	sa, err := srv.ServiceAccount("arr-mixed")
	if err != nil {
		t.Fatal(err)
	}
	var f map[string]any
	if err := json.Unmarshal(sa, &f); err != nil {
		t.Fatal(err)
	}
	f["installed"] = map[string]any{"client_id": "c", "client_secret": "s", "redirect_uris": []string{"http://127.0.0.1:1/"},
		"auth_uri": "http://127.0.0.1:1/auth", "token_uri": "http://127.0.0.1:1/token"}
	mixed, _ := json.Marshal(f)
	m, _ := vertexModel(t, srv, "gemini-mixed")
	c := geminiClient(t, 5, writeFile(t, string(mixed)))
	var callErr error
	func() {
		defer func() {
			if p := recover(); p != nil {
				t.Fatalf("Do panicked on a service account with an OAuth client block: %v", p)
			}
		}()
		_, callErr = c.Do(context.Background(), m, upstream.Request{API: upstream.APIVertex, Body: geminiBody(t, &chat.Request{Messages: userMessage(chat.TextPart("x"))})})
	}()
	if !errors.Is(callErr, upstream.ErrNotConfigured) {
		t.Fatalf("err = %v, want not configured", callErr)
	}
}

// Gemini streams have no [DONE]: the reader's OpenAI rule still ends
// one at "data: [DONE]" with io.EOF, so a body (a proxy, a broken or
// hostile upstream) that sends half a reply and then [DONE], with no
// finishReason, reads as a complete reply instead of a cut one.
func TestAttackGeminiStreamDoneWithoutFinish(t *testing.T) {
	srv := sseServer(t, "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"half a rep\"}]}}]}\r\n\r\ndata: [DONE]\r\n\r\n")
	c := geminiClient(t, 5, "")
	m := routing.Model{ID: "g-done", Vendor: "google", UpstreamModel: "g", BaseURL: srv.URL, APIKeyEnv: "GK"}
	resp, err := c.Do(context.Background(), m, upstream.Request{API: upstream.APIGemini, Body: []byte(`{}`), Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Stream.Close()
	for range 10 {
		if _, err = resp.Stream.Next(); err != nil {
			break
		}
	}
	if !errors.Is(err, upstream.ErrCut) {
		t.Fatalf("a Gemini stream ended by [DONE] before any finishReason: %v, want ErrCut", err)
	}
}

// A token endpoint that hangs holds the call for the whole client
// Timeout even after its caller left: the token is fetched with the
// token source's own background context, never the call's, so a
// client that hung up (or whose deadline passed) keeps a goroutine and
// a slot waiting, and every other call behind the source's lock waits
// with it.
func TestAttackHangingTokenServerIgnoresCaller(t *testing.T) {
	srv := upstreamtest.Start(t)
	got := make(chan struct{}, 1)
	release := make(chan struct{})
	tok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case got <- struct{}{}:
		default:
		}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(tok.Close)
	t.Cleanup(func() { close(release) })
	m, path := vertexModel(t, srv, "gemini-hang")
	rewriteTokenURI(t, path, tok.URL+"/token")
	c, err := upstream.New(upstream.Config{Timeout: 30 * time.Second, StreamIdleTimeout: 30 * time.Second,
		APIKey: func(env string) string {
			if env == "SA" {
				return path
			}
			return ""
		}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := c.Do(ctx, m, upstream.Request{API: upstream.APIVertex, Body: geminiBody(t, &chat.Request{Messages: userMessage(chat.TextPart("x"))})})
		done <- err
	}()
	<-got
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a call whose token never came succeeded")
		}
	case <-time.After(5 * time.Second): // a watchdog, far under the 30s Timeout
		t.Fatal("Do still waits for the token server 5s after its caller left")
	}
}

// A rotated service-account key: the operator writes the new key's
// JSON over the file and deletes the old key. The cached token source
// keeps the old key for ever: once its token expires, every refresh is
// the token endpoint's invalid_grant, and only a Vertex AI 401 drops
// the source (forgetToken), which never comes since no token is had:
// the model fails until the process restarts, never reading the file
// again.
func TestAttackRotatedKeyNeverReread(t *testing.T) {
	srv := upstreamtest.Start(t)
	root := strings.TrimSuffix(srv.URL, "/v1")
	var mu sync.Mutex
	deleted := map[string]bool{}
	// The token endpoint in front of the stand-in's: it refuses the
	// deleted keys' assertions, and grants short-lived tokens (expired
	// within oauth2's 10s margin: the next call refreshes).
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		iss := assertionIssuer(r.PostForm.Get("assertion"))
		mu.Lock()
		gone := deleted[iss]
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if gone {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"error":"invalid_grant","error_description":"Invalid JWT Signature."}`)
			return
		}
		req, _ := http.NewRequestWithContext(r.Context(), http.MethodPost, root+"/token", strings.NewReader(r.PostForm.Encode()))
		req.Host = r.Host // the assertion's audience is this endpoint
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			http.Error(w, err.Error(), 502)
			return
		}
		defer resp.Body.Close()
		var tok map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil {
			http.Error(w, err.Error(), 502)
			return
		}
		if _, ok := tok["access_token"]; ok {
			tok["expires_in"] = 1
		}
		w.WriteHeader(resp.StatusCode)
		_ = json.NewEncoder(w).Encode(tok)
	}))
	t.Cleanup(proxy.Close)
	m, path := vertexModel(t, srv, "gemini-rot")
	rewriteTokenURI(t, path, proxy.URL+"/token")
	c := geminiClient(t, 100, path)
	r := &chat.Request{Messages: userMessage(chat.TextPart("x"))}
	reply(t, c, m, upstream.APIVertex, r)

	// Rotate: the new key's JSON over the file, the old key deleted.
	old := readJSON(t, path)["client_email"].(string)
	next, err := srv.ServiceAccount("arr-gemini-rot-2")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, next, 0o600); err != nil {
		t.Fatal(err)
	}
	rewriteTokenURI(t, path, proxy.URL+"/token")
	mu.Lock()
	deleted[old] = true
	mu.Unlock()

	var errs []error
	for range 3 {
		_, err := c.Do(context.Background(), m, upstream.Request{API: upstream.APIVertex, Body: geminiBody(t, r)})
		if err == nil {
			return // the new key was read
		}
		errs = append(errs, err)
	}
	// The file is good: a client that reads it afresh is served.
	reply(t, geminiClient(t, 100, path), m, upstream.APIVertex, r)
	t.Fatalf("3 calls after the key was rotated in the file all failed: %v", errs)
}

// rewriteTokenURI sets the token_uri of the service-account JSON at path.
func rewriteTokenURI(t *testing.T, path, uri string) {
	t.Helper()
	f := readJSON(t, path)
	f["token_uri"] = uri
	b, _ := json.Marshal(f)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f map[string]any
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f
}

// assertionIssuer is the iss claim of a JWT assertion (unverified).
func assertionIssuer(a string) string {
	parts := strings.Split(a, ".")
	if len(parts) != 3 {
		return ""
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return ""
	}
	var c struct {
		Iss string `json:"iss"`
	}
	_ = json.Unmarshal(payload, &c)
	return c.Iss
}

// A token endpoint that answers 200 with an empty access_token (a
// broken or hostile one): x/oauth2's jwt source takes it without the
// check internal.RetrieveToken makes ("server response missing
// access_token"), and the call goes out to Vertex AI as
// "Authorization: Bearer " with the client's prompt; the failure is
// then Vertex AI's 401 (the model's breaker blames the model), not
// ErrToken, and nothing should have been sent.
func TestAttackEmptyAccessTokenSent(t *testing.T) {
	srv := upstreamtest.Start(t)
	var mu sync.Mutex
	var auths []string
	vertex := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auths = append(auths, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, `{"error":{"code":401,"message":"Request had invalid authentication credentials.","status":"UNAUTHENTICATED"}}`)
	}))
	t.Cleanup(vertex.Close)
	tok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"access_token":"","token_type":"Bearer","expires_in":3600}`)
	}))
	t.Cleanup(tok.Close)
	m, path := vertexModel(t, srv, "gemini-empty")
	m.BaseURL = vertex.URL + "/v1"
	rewriteTokenURI(t, path, tok.URL+"/token")
	c := geminiClient(t, 5, path)
	_, err := c.Do(context.Background(), m, upstream.Request{API: upstream.APIVertex, Body: geminiBody(t, &chat.Request{Messages: userMessage(chat.TextPart("secret prompt"))})})
	mu.Lock()
	defer mu.Unlock()
	if !errors.Is(err, upstream.ErrToken) || len(auths) != 0 {
		t.Fatalf("err = %v; %d calls reached Vertex AI with Authorization %q", err, len(auths), auths)
	}
}
