package webhook

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
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

// Every numeric form of a loopback address is refused before any
// connection, by the check a monitor's URL had at creation; with private
// addresses allowed the form is dialed as the address it is, so no
// resolver is ever asked about it.
func TestSendNumericHosts(t *testing.T) {
	secret, _ := NewSecret()
	var reached atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached.Add(1) }))
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	guard := netguard.New(netguard.Config{InterfaceAddrs: func() ([]netip.Addr, error) { return nil, nil }})
	guarded, open := New(Config{Guard: guard}), New(Config{AllowPrivate: true, Timeout: 5 * time.Second})
	m := Message{ID: "msg_1", At: time.Now(), Payload: []byte(`{}`)}
	forms := []string{"2130706433", "0x7f.1", "127.1", "0177.0.0.1", "127.0.0.1.", "0x7f000001", "[::ffff:127.0.0.1]"}
	for _, h := range forms {
		a, err := guarded.Send(context.Background(), "http://"+h+":"+port+"/hook", secret, m)
		if err != nil || a.OK() || !strings.Contains(a.Error, "SSRF guard") || !strings.Contains(a.Error, "127.0.0.1") {
			t.Errorf("guarded %s: %+v %v", h, a, err)
		}
	}
	if reached.Load() != 0 {
		t.Fatalf("the guard let %d attempts through", reached.Load())
	}
	for _, h := range forms[:6] {
		if a, err := open.Send(context.Background(), "http://"+h+":"+port+"/hook", secret, m); err != nil || !a.OK() {
			t.Errorf("allowed %s: %+v %v", h, a, err)
		}
	}
	if reached.Load() != 6 {
		t.Fatalf("%d of 6 allowed attempts arrived", reached.Load())
	}
	if a, _ := guarded.Send(context.Background(), "http://256.0.0.1:"+port+"/", secret, m); a.OK() || !strings.Contains(a.Error, "not valid") {
		t.Errorf("an invalid numeric host: %+v", a)
	}
}

// What an account is shown of a failed delivery to a name never says what
// the name resolved to, nor the resolver's address; for an address it
// wrote itself the guard's reason is shown. The errors are built here, as
// the transport returns them: nothing is resolved or dialed.
func TestDescribeHidesResolvedAddresses(t *testing.T) {
	name, _ := netguard.ParseHost("hooks.invalid")
	literal, _ := netguard.ParseHost("10.0.0.7")
	dial := func(inner error) error {
		return &url.Error{Op: "Post", URL: "http://hooks.invalid/x?token=t", Err: &net.OpError{Op: "dial", Net: "tcp",
			Addr: &net.TCPAddr{IP: net.ParseIP("10.0.0.7"), Port: 443}, Err: inner}}
	}
	refused := &netguard.RefusedError{Addr: netip.MustParseAddr("10.0.0.7"), Reason: "private-use (RFC 1918)"}
	for _, tc := range []struct {
		name string
		host netguard.Host
		err  error
		want string
	}{
		{"a name that resolves to a refused address", name, dial(refused), "hooks.invalid resolves to an address that is not public"},
		{"a name whose address refuses the connection", name, dial(os.NewSyscallError("connect", syscall.ECONNREFUSED)), "could not connect: connection refused"},
		{"a name that does not resolve", name, &url.Error{Op: "Post", URL: "http://hooks.invalid/", Err: &net.OpError{Op: "dial", Net: "tcp",
			Err: &net.DNSError{Err: "no such host", Name: "hooks.invalid", Server: "10.0.0.53:53", IsNotFound: true}}}, "could not be resolved: no such host"},
		{"an unknown error naming an address", name, fmt.Errorf("tls: handshake with 10.0.0.7:443 failed"), "tls: handshake with (an address) failed"},
		{"an address the account wrote", literal, dial(refused), "address 10.0.0.7 is not public: private-use (RFC 1918)"},
	} {
		got := describe(tc.host, tc.err)
		if !strings.Contains(got, tc.want) || strings.Contains(got, "token") {
			t.Errorf("%s: %q, want it to say %q", tc.name, got, tc.want)
		}
		if tc.host.Name != "" && (strings.Contains(got, "10.0.0.7") || strings.Contains(got, "10.0.0.53")) {
			t.Errorf("%s: %q reveals an address", tc.name, got)
		}
	}
}
