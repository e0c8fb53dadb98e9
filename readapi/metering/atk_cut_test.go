package metering_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/domain/usage"
	"github.com/arr-dev/arr/projections/identity"
	"github.com/arr-dev/arr/readapi/metering"
)

// TestAtkCutAnswerIsNotMetered: the records export cuts an answer that
// failed once its first byte was sent by panicking with
// http.ErrAbortHandler (recordsapi cutExport), after it has streamed as
// much of the county as it could. The meter counts a request after
// c.Next() returns, not in a deferred call, so a cut answer, however
// much it sent, is never counted: a client that hangs up just before the
// end of each export (it has the parcels, short of the last page) is
// never metered for them.
func TestAtkCutAnswerIsNotMetered(t *testing.T) {
	gin.SetMode(gin.ReleaseMode)
	st := newStore(t)
	arrived := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	m, err := metering.New(newHandler(t, st), metering.Config{Now: func() time.Time { return arrived }})
	if err != nil {
		t.Fatal(err)
	}
	p := identity.Principal{AccountID: uuid.New(), KeyID: uuid.New(), Service: account.Records}
	e := gin.New()
	e.GET("/export", m.Middleware(func(*gin.Context) (identity.Principal, bool) { return p, true }), func(c *gin.Context) {
		c.Status(http.StatusOK)
		for range 100 {
			_, _ = c.Writer.Write([]byte("county,apn,address\r\n"))
		}
		c.Writer.Flush()
		panic(http.ErrAbortHandler) // what cutExport does
	})
	srv := httptest.NewServer(e)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/export")
	if err != nil {
		t.Fatal(err)
	}
	n, _ := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || n == 0 {
		t.Fatalf("the cut answer: %d, %d bytes", resp.StatusCode, n)
	}
	if err := m.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	got, _ := logged(t, st)
	if got[slot{p.KeyID, usage.Day(arrived)}] != 1 {
		t.Fatalf("a cut answer that sent %d bytes: usage in the log %v, want 1 call", n, got)
	}
}
