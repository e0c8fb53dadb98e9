package httpx_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/arr-dev/arr/readapi/httpx"
)

// TestClientHangUp: a handler's error for a request whose client hung up
// (its context cancelled) is not answered and not taken for a server
// error, whatever it is: a query cancelled under it would otherwise be a
// 503 database_unavailable, a bare context error a 500. It is logged at
// info level as 499 with the hang-up named, and measured as 499. A
// deadline that runs out is no hang-up.
func TestClientHangUp(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		err    error
		cancel bool
		status int
	}{
		{"a cancelled query", fmt.Errorf("loading parcels: %w", &pgconn.PgError{Code: "57014", Message: "canceling statement due to user request"}), true, 499},
		{"a pgconn timeout", fmt.Errorf("loading parcels: timeout: %w", context.Canceled), true, 499},
		{"a bare context error", context.Canceled, true, 499},
		{"the client's own mistake", fmt.Errorf("parsing: %w", httpx.TooLarge(10)), true, 499},
		{"a client still there", context.Canceled, false, 500},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var logs bytes.Buffer
			e := hangupEngine(t, &logs, tc.err)
			ctx, cancel := context.WithCancel(context.Background())
			if tc.cancel {
				cancel()
			}
			defer cancel()
			w := httptest.NewRecorder()
			e.ServeHTTP(w, httptest.NewRequest("GET", "/work", nil).WithContext(ctx))
			if w.Code != tc.status {
				t.Fatalf("status %d, want %d", w.Code, tc.status)
			}
			line := logs.String()
			if tc.status == 499 {
				if !strings.Contains(line, `"level":"INFO"`) || !strings.Contains(line, `"status":499`) || !strings.Contains(line, "client closed the request") || w.Body.Len() != 0 {
					t.Fatalf("the hang-up is logged as %s and answered with %q", line, w.Body.String())
				}
			} else if !strings.Contains(line, `"level":"ERROR"`) || strings.Contains(line, "hangup") {
				t.Fatalf("a server error is logged as %s", line)
			}
		})
	}
}

func hangupEngine(t testing.TB, logs *bytes.Buffer, err error) *gin.Engine {
	t.Helper()
	gin.SetMode(gin.TestMode)
	fail := func(c *gin.Context, err error) {
		p := httpx.ProblemFor(c, err)
		c.Abort()
		c.JSON(p.Status, gin.H{"error": gin.H{"status": p.Status, "code": p.Code}})
	}
	e, berr := httpx.NewEngine(httpx.Base{
		Service: "test", Fail: fail, OpenAPI: []byte(`{}`),
		Logger: slog.New(slog.NewJSONHandler(logs, nil)),
		Health: func(ctx context.Context) (int, any) { return http.StatusOK, gin.H{"status": "ok"} },
	})
	if berr != nil {
		t.Fatal(berr)
	}
	e.GET("/work", httpx.Handle(fail, func(*gin.Context) error { return err }))
	return e
}
