package webhook

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/arr-dev/arr/adapters/netguard"
)

// A delivery reaches a loopback receiver (allowed for the test) signed so
// that the Standard Webhooks library verifies it, with the same id on a
// retry.
func TestSendSigned(t *testing.T) {
	secret, err := NewSecret()
	if err != nil || !strings.HasPrefix(secret, "whsec_") || len(secret) != len("whsec_")+32 {
		t.Fatalf("secret %q %v", secret, err)
	}
	verifier, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	var mu sync.Mutex
	var ids []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := verifier.Verify(body, r.Header); err != nil {
			t.Errorf("verification: %v", err)
		}
		mu.Lock()
		ids = append(ids, r.Header.Get("webhook-id"))
		mu.Unlock()
		if r.Header.Get("Content-Type") != "application/json" || r.Header.Get("User-Agent") != "arr-test" {
			t.Errorf("headers %v", r.Header)
		}
		if calls.Add(1) == 1 {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	s := New(Config{AllowPrivate: true, UserAgent: "arr-test"})
	m := Message{ID: "msg_2wZ1", At: time.Now(), Payload: []byte(`{"type":"parcel.signal_added","data":{}}`)}
	a, err := s.Send(context.Background(), srv.URL, secret, m)
	if err != nil || a.OK() || a.Status != 500 || !strings.Contains(a.Error, "500") {
		t.Fatalf("first attempt: %+v %v", a, err)
	}
	m.At = time.Now()
	a, err = s.Send(context.Background(), srv.URL, secret, m)
	if err != nil || !a.OK() || a.Status != 204 {
		t.Fatalf("retry: %+v %v", a, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(ids) != 2 || ids[0] != "msg_2wZ1" || ids[1] != ids[0] {
		t.Fatalf("ids %v", ids)
	}
	// Another secret does not verify it.
	other, _ := NewSecret()
	if other == secret {
		t.Fatal("two secrets alike")
	}
}

// Redirects are not followed; a slow receiver times out; a huge answer is
// read only so far; a bad URL or secret makes no attempt.
func TestSendFailures(t *testing.T) {
	secret, _ := NewSecret()
	var redirected atomic.Bool
	mux := http.NewServeMux()
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/elsewhere", http.StatusFound) })
	mux.HandleFunc("/elsewhere", func(w http.ResponseWriter, r *http.Request) { redirected.Store(true) })
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(2 * time.Second):
		}
	})
	mux.HandleFunc("/huge", func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i < 1000 && r.Context().Err() == nil; i++ {
			_, _ = w.Write(make([]byte, 64<<10))
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	s := New(Config{AllowPrivate: true, Timeout: 300 * time.Millisecond, MaxResponseBytes: 1024})
	m := Message{ID: "msg_1", At: time.Now(), Payload: []byte(`{}`)}
	a, err := s.Send(context.Background(), srv.URL+"/redirect", secret, m)
	if err != nil || a.OK() || a.Status != 302 || redirected.Load() {
		t.Fatalf("redirect: %+v %v (followed %v)", a, err, redirected.Load())
	}
	start := time.Now()
	a, err = s.Send(context.Background(), srv.URL+"/slow", secret, m)
	if err != nil || a.OK() || a.Status != 0 || time.Since(start) > 3*time.Second {
		t.Fatalf("slow: %+v %v after %v", a, err, time.Since(start))
	}
	a, err = s.Send(context.Background(), srv.URL+"/huge", secret, m)
	if err != nil || !a.OK() || a.Status != 200 {
		t.Fatalf("huge: %+v %v", a, err)
	}
	for _, bad := range []string{"ftp://example.invalid/x", "/relative", "http://user:pw@127.0.0.1/", "http://"} {
		if _, err := s.Send(context.Background(), bad, secret, m); err == nil {
			t.Errorf("URL %q: no error", bad)
		}
	}
	if _, err := s.Send(context.Background(), srv.URL, "whsec_not base64!", m); err == nil {
		t.Error("a bad secret: no error")
	}
}

// Without AllowPrivate the guard refuses the receiver's address before
// any connection is made (the address is loopback: nothing leaves the
// machine), and the attempt says so, without the URL.
func TestSendGuarded(t *testing.T) {
	secret, _ := NewSecret()
	var reached atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached.Store(true) }))
	defer srv.Close()
	guard := netguard.New(netguard.Config{InterfaceAddrs: func() ([]netip.Addr, error) { return nil, nil }})
	s := New(Config{Guard: guard})
	a, err := s.Send(context.Background(), srv.URL+"/hook?token=secret-token", secret, Message{ID: "msg_1", At: time.Now(), Payload: []byte(`{}`)})
	if err != nil || a.OK() || reached.Load() || !strings.Contains(a.Error, "SSRF guard") || strings.Contains(a.Error, "secret-token") {
		t.Fatalf("guarded: %+v %v (reached %v)", a, err, reached.Load())
	}
	if !errors.Is(guard.Check(netip.MustParseAddr("127.0.0.1")), netguard.ErrRefused) {
		t.Fatal("the guard passes loopback")
	}
}

func TestNextAttempt(t *testing.T) {
	first := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	want := []time.Duration{0, 5 * time.Second, 35 * time.Second, 215 * time.Second, 1295 * time.Second, 7775 * time.Second,
		7775*time.Second + 10*time.Hour, 7775*time.Second + 20*time.Hour}
	for n, w := range want {
		at, ok := NextAttempt(first, n)
		if !ok || at.Sub(first) != w {
			t.Errorf("after %d attempts: %v %v, want +%v", n, at.Sub(first), ok, w)
		}
	}
	if d, _ := NextAttempt(first, 1); d.Sub(first) > 10*time.Second {
		t.Errorf("the first retry comes after %v", d.Sub(first))
	}
	if _, ok := NextAttempt(first, len(want)); ok {
		t.Error("a retry more than 24 h after the first attempt")
	}
}

// A server that closes a kept-alive connection after reading the next
// delivery, without answering (its keep-alive timeout ran out as the
// request came), gets the delivery again on a fresh connection: it is
// idempotent by its id (Idempotency-Key), so net/http replays it.
func TestSendReplaysOnAClosedKeptAliveConnection(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var keys []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		answer := func(c net.Conn, r *bufio.Reader) bool {
			req, err := http.ReadRequest(r)
			if err != nil {
				return false
			}
			_, _ = io.Copy(io.Discard, req.Body)
			keys = append(keys, req.Header.Get("Idempotency-Key"))
			_, err = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
			return err == nil
		}
		// The first connection answers one delivery, then reads the
		// next and hangs up.
		c1, err := ln.Accept()
		if err != nil {
			return
		}
		r1 := bufio.NewReader(c1)
		answer(c1, r1)
		if req, err := http.ReadRequest(r1); err == nil {
			_, _ = io.Copy(io.Discard, req.Body)
		}
		c1.Close()
		c2, err := ln.Accept()
		if err != nil {
			return
		}
		defer c2.Close()
		answer(c2, bufio.NewReader(c2))
	}()
	secret, _ := NewSecret()
	s := New(Config{AllowPrivate: true, Timeout: 5 * time.Second})
	for i, id := range []string{"msg_1", "msg_2"} {
		a, err := s.Send(context.Background(), "http://"+ln.Addr().String()+"/hook", secret, Message{ID: id, At: time.Now(), Payload: []byte(`{}`)})
		if err != nil || !a.OK() {
			t.Fatalf("delivery %d: %+v %v", i+1, a, err)
		}
	}
	<-done
	if len(keys) != 2 || keys[0] != "msg_1" || keys[1] != "msg_2" {
		t.Fatalf("the server answered %v", keys)
	}
}
