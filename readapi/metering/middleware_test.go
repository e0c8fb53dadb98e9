package metering_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/arr-dev/arr/projections/identity"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/domain/usage"
	"github.com/arr-dev/arr/readapi/metering"
)

// TestMiddlewareCountsServedRequests: the middleware counts requests the
// handler served (5xx included) and not those it refused with a 4xx, as
// the quota gives those back; each on the UTC day it arrived.
func TestMiddlewareCountsServedRequests(t *testing.T) {
	gin.SetMode(gin.TestMode)
	st := newStore(t)
	arrived := time.Date(2026, 11, 21, 23, 59, 59, 0, time.UTC)
	m, err := metering.New(newHandler(t, st), metering.Config{Now: func() time.Time { return arrived }})
	if err != nil {
		t.Fatal(err)
	}
	p := identity.Principal{AccountID: uuid.New(), KeyID: uuid.New(), Service: account.Records}
	e := gin.New()
	g := e.Group("", m.Middleware(func(*gin.Context) (identity.Principal, bool) { return p, true }))
	for path, status := range map[string]int{"/ok": 200, "/bad": 400, "/forbidden": 403, "/missing": 404, "/boom": 500} {
		g.GET(path, func(c *gin.Context) { c.JSON(status, gin.H{}) })
	}
	tests := []struct {
		name string
		path string
		n    int
	}{
		{"served", "/ok", 3},
		{"bad parameters", "/bad", 7},
		{"forbidden", "/forbidden", 2},
		{"unknown list", "/missing", 4},
		{"server error", "/boom", 1},
	}
	for _, tc := range tests {
		for i := 0; i < tc.n; i++ {
			rec := httptest.NewRecorder()
			e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tc.path, nil))
		}
	}
	if err := m.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	got, _ := logged(t, st)
	if want := int64(3 + 1); got[slot{p.KeyID, usage.Day(arrived)}] != want || len(got) != 1 {
		t.Fatalf("usage in the log %v, want %d calls (the 200s and the 500) on %s only", got, want, usage.Day(arrived))
	}
}

// TestAbortBeforeAnyByteIsNotMetered: a handler that aborts with
// http.ErrAbortHandler before it sends anything (the gateway, when a
// completion's outcome is unknown) served nothing and is not metered; one
// that aborts after its first byte is (TestAtkCutAnswerIsNotMetered).
func TestAbortBeforeAnyByteIsNotMetered(t *testing.T) {
	gin.SetMode(gin.ReleaseMode)
	st := newStore(t)
	m, err := metering.New(newHandler(t, st), metering.Config{})
	if err != nil {
		t.Fatal(err)
	}
	p := identity.Principal{AccountID: uuid.New(), KeyID: uuid.New(), Service: account.Records}
	e := gin.New()
	e.GET("/", m.Middleware(func(*gin.Context) (identity.Principal, bool) { return p, true }), func(*gin.Context) {
		panic(http.ErrAbortHandler)
	})
	srv := httptest.NewServer(e)
	defer srv.Close()
	if resp, err := http.Get(srv.URL); err == nil {
		resp.Body.Close()
		t.Fatalf("the aborted request was answered: %d", resp.StatusCode)
	}
	if err := m.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, _ := logged(t, st); len(got) != 0 {
		t.Fatalf("an answer aborted before any byte was metered: %v", got)
	}
}
