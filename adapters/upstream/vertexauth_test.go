package upstream_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/arr-dev/arr/adapters/upstream"
	"github.com/arr-dev/arr/adapters/upstream/upstreamtest"
	"github.com/arr-dev/arr/domain/chat"
)

// A credentials file or value the client cannot use is not configured,
// and the error names the variable and what is wrong without a byte of
// the value or the file: a key file that is not JSON, one whose key is
// not PEM, JSON where the path belongs, a directory.
func TestVertexCredentialsErrorsKeepSecrets(t *testing.T) {
	srv := upstreamtest.Start(t)
	m, _ := vertexModel(t, srv, "gemini-sec")
	const secret = "TOPSECRET-7f3a"
	for _, tc := range []struct{ name, value string }{
		{"not JSON", writeFile(t, `{"type":"service_account","private_key":"`+secret+`"`)},
		{"key not PEM", writeFile(t, `{"type":"service_account","client_email":"a@b","private_key":"`+secret+`","token_uri":"http://127.0.0.1:1/token"}`)},
		{"a number for a string", writeFile(t, `{"type":"service_account","client_email":7,"private_key":"`+secret+`"}`)},
		{"JSON for a path", `{"type":"service_account","private_key":"` + secret + `"}`},
		{"directory", secretDir(t, secret)},
		{"absent", t.TempDir() + "/" + secret},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := geminiClient(t, 5, tc.value).Do(context.Background(), m, upstream.Request{API: upstream.APIVertex, Body: geminiBody(t, &chat.Request{Messages: userMessage(chat.TextPart("x"))})})
			if !errors.Is(err, upstream.ErrNotConfigured) || strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), "SA") {
				t.Fatalf("err = %v", err)
			}
		})
	}
	if n := srv.TokenRequests(); n != 0 {
		t.Fatalf("%d token requests", n)
	}
}

// A Vertex AI project or location outside Google's characters (a path
// step, a query, an escape) is not configured: nothing is sent.
func TestVertexProjectLocationValidated(t *testing.T) {
	srv := upstreamtest.Start(t)
	good, path := vertexModel(t, srv, "gemini-pl")
	c := geminiClient(t, 5, path)
	for _, tc := range []struct{ project, location string }{
		{"..", "us-central1"}, {"arr-test/../x", "us-central1"}, {"arr-test?x=1", "us-central1"}, {"arr%2Ftest", "us-central1"},
		{"Arr-Test", "us-central1"}, {"arr-test", ".."}, {"arr-test", "us central1"}, {"arr-test", "us-central1/x"},
	} {
		m := good
		m.Project, m.Location = tc.project, tc.location
		_, err := c.Do(context.Background(), m, upstream.Request{API: upstream.APIVertex, Body: geminiBody(t, &chat.Request{Messages: userMessage(chat.TextPart("x"))})})
		if !errors.Is(err, upstream.ErrNotConfigured) {
			t.Errorf("project %q, location %q: err = %v", tc.project, tc.location, err)
		}
	}
	for _, p := range []string{"arr-test", "123456789012", "example.com:arr-test"} {
		m := good
		m.Project = p
		_, err := c.Do(context.Background(), m, upstream.Request{API: upstream.APIVertex, Body: geminiBody(t, &chat.Request{Messages: userMessage(chat.TextPart("x"))})})
		if errors.Is(err, upstream.ErrNotConfigured) {
			t.Errorf("project %q refused: %v", p, err)
		}
	}
	if n := srv.Calls("gemini-pl"); n != 3 {
		t.Fatalf("%d calls reached Vertex AI, want the 3 good ones", n)
	}
}

// A call waiting for another's token fetch is not held by it: when the
// fetching call leaves, the waiting one fetches a token itself and is
// served.
func TestVertexTokenFetchOfALeftCall(t *testing.T) {
	srv := upstreamtest.Start(t)
	root := strings.TrimSuffix(srv.URL, "/v1")
	var mu sync.Mutex
	first := true
	hung := make(chan struct{})
	release := make(chan struct{})
	tok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hang := first
		first = false
		mu.Unlock()
		if hang {
			_ = r.ParseForm() // read through: the server then sees the client hang up
			close(hung)
			select {
			case <-r.Context().Done():
			case <-release:
			}
			return
		}
		req, _ := http.NewRequestWithContext(r.Context(), http.MethodPost, root+"/token", r.Body)
		req.Host = r.Host
		req.Header.Set("Content-Type", r.Header.Get("Content-Type"))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			http.Error(w, err.Error(), 502)
			return
		}
		defer resp.Body.Close()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	}))
	t.Cleanup(tok.Close)
	t.Cleanup(func() { close(release) })
	m, path := vertexModel(t, srv, "gemini-left")
	rewriteTokenURI(t, path, tok.URL+"/token")
	c := geminiClient(t, 5, path)
	body := geminiBody(t, &chat.Request{Messages: userMessage(chat.TextPart("x"))})
	ctx, cancel := context.WithCancel(context.Background())
	left := make(chan error, 1)
	go func() {
		_, err := c.Do(ctx, m, upstream.Request{API: upstream.APIVertex, Body: body})
		left <- err
	}()
	<-hung
	served := make(chan error, 1)
	go func() {
		_, err := c.Do(context.Background(), m, upstream.Request{API: upstream.APIVertex, Body: body})
		served <- err
	}()
	cancel()
	if err := <-left; err == nil {
		t.Fatal("the call that left was served")
	}
	if err := <-served; err != nil {
		t.Fatalf("the waiting call: %v", err)
	}
}

// A Vertex AI stream whose first event is an error with code 401 (the
// token refused) drops the token, as a 401 answer does: the next call
// fetches a new one.
func TestVertexStream401EventDropsToken(t *testing.T) {
	srv := upstreamtest.Start(t)
	vertex := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: {\"error\":{\"code\":401,\"message\":\"Request had invalid authentication credentials.\",\"status\":\"UNAUTHENTICATED\"}}\r\n\r\n")
	}))
	t.Cleanup(vertex.Close)
	m, path := vertexModel(t, srv, "gemini-s401")
	m.BaseURL = vertex.URL + "/v1"
	c := geminiClient(t, 5, path)
	for range 2 {
		_, err := c.Do(context.Background(), m, upstream.Request{API: upstream.APIVertex, Stream: true, Body: geminiBody(t, &chat.Request{Messages: userMessage(chat.TextPart("x"))})})
		var ue *upstream.Error
		if !errors.As(err, &ue) || !ue.Retryable {
			t.Fatalf("err = %v", err)
		}
	}
	if n := srv.TokenRequests(); n != 2 {
		t.Fatalf("%d token requests, want 2 (the refused token dropped)", n)
	}
}

// A token endpoint's 200 whose token is not a Bearer one, or not a
// header value, is a token error, and nothing reaches Vertex AI.
func TestVertexTokenAnswerChecked(t *testing.T) {
	srv := upstreamtest.Start(t)
	for _, answer := range []map[string]any{
		{"access_token": "abc\r\nX-Injected: 1", "token_type": "Bearer", "expires_in": 3600},
		{"access_token": "abc", "token_type": "mac", "expires_in": 3600},
		{"token_type": "Bearer"},
	} {
		tok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(answer)
		}))
		t.Cleanup(tok.Close)
		m, path := vertexModel(t, srv, "gemini-ta")
		rewriteTokenURI(t, path, tok.URL+"/token")
		_, err := geminiClient(t, 5, path).Do(context.Background(), m, upstream.Request{API: upstream.APIVertex, Body: geminiBody(t, &chat.Request{Messages: userMessage(chat.TextPart("x"))})})
		if !errors.Is(err, upstream.ErrToken) {
			t.Errorf("answer %v: err = %v", answer, err)
		}
	}
	if n := srv.Calls("gemini-ta"); n != 0 {
		t.Fatalf("%d calls reached Vertex AI", n)
	}
}

// A Gemini stream's [DONE] after its finishing event is no end of it
// either (Gemini sends none): only the body's end is, so it cuts the
// stream.
func TestGeminiStreamDoneAfterFinish(t *testing.T) {
	srv := sseServer(t, "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"all\"}]},\"finishReason\":\"STOP\"}]}\r\n\r\ndata: [DONE]\r\n\r\n")
	c := geminiClient(t, 5, "")
	m := geminiModel(upstreamtest.Start(t), "g-end")
	m.BaseURL = srv.URL
	resp, err := c.Do(context.Background(), m, upstream.Request{API: upstream.APIGemini, Body: []byte(`{}`), Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Stream.Close()
	var n int
	for range 10 {
		if _, err = resp.Stream.Next(); err != nil {
			break
		}
		n++
	}
	if !errors.Is(err, upstream.ErrCut) || n != 1 {
		t.Fatalf("%d events, then %v; want 1 and ErrCut", n, err)
	}
}

// secretDir is a directory whose name is secret.
func secretDir(t *testing.T, secret string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), secret)
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}
