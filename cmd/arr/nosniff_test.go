package main_test

import (
	"bytes"
	"io"
	"net/http"
	"testing"
)

// Issue 36, finding 4: the low findings of the three services' HTTP
// surface, each against a running arr up.

// sendReq makes one request and returns the response with its body read.
func sendReq(t testing.TB, method, u string, body []byte, headers map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, u, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body == nil {
		req.Body = http.NoBody
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// TestEveryResponseIsNosniff: every response of every service carries
// X-Content-Type-Options: nosniff, whatever answered it: a route, an
// error, the router's 404 and 405, a redirect, static assets, pages,
// /healthz and /metrics.
func TestEveryResponseIsNosniff(t *testing.T) {
	e := newEnv(t)
	e.up()
	e.createAccount("sniff@example.com", "free")
	key := e.mint("sniff@example.com", "records")
	for _, c := range []struct {
		method, url string
		headers     map[string]string
	}{
		{"GET", e.answer + "/healthz", nil},
		{"GET", e.answer + "/metrics", nil},
		{"GET", e.answer + "/openapi.json", nil},
		{"GET", e.answer + "/no/such/route", nil},
		{"POST", e.answer + "/healthz", nil},
		{"GET", e.answer + "/api/v1/answer?q=x", nil},
		{"GET", e.answer + "/account", nil},
		{"GET", e.gateway + "/healthz", nil},
		{"GET", e.gateway + "/metrics", nil},
		{"GET", e.gateway + "/v1/plans", nil},
		{"GET", e.gateway + "/v1/models/", nil},
		{"POST", e.gateway + "/v1/chat/completions", nil},
		{"GET", e.gateway + "/nope", nil},
		{"GET", e.records + "/healthz", nil},
		{"GET", e.records + "/metrics", nil},
		{"GET", e.records + "/api/v1/states", nil},
		{"GET", e.records + "/api/v1/states/", nil},
		{"GET", e.records + "/api/v1/parcels?bbox=oops", nil},
		{"GET", e.records + "/api/v1/key", map[string]string{"X-API-Key": key.Secret}},
		{"GET", e.records + "/map", nil},
		{"GET", e.records + "/map/assets/map.js", nil},
		{"GET", e.records + "/map/assets/nothing.js", nil},
		{"GET", e.records + "/account", nil},
		{"DELETE", e.records + "/api/v1/states", nil},
	} {
		resp, body := sendReq(t, c.method, c.url, nil, c.headers)
		if got := resp.Header.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("%s %s: %d, X-Content-Type-Options %q, want nosniff (%.80s)", c.method, c.url, resp.StatusCode, got, body)
		}
	}
}
