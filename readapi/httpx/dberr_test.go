package httpx_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/migrations/migratetest"
	"github.com/arr-dev/arr/readapi/httpx"
)

// closedPort returns a loopback address where nothing listens: a port the
// test just had and closed.
func closedPort(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// realConnectError is what pgx returns for a database nobody serves.
func realConnectError(t testing.TB) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, "postgres://arr@"+closedPort(t)+"/arr?sslmode=disable&connect_timeout=5")
	if err == nil {
		conn.Close(ctx)
		t.Fatal("connected to a closed port")
	}
	return err
}

// realPoolError is what a query on a pool of a database nobody serves
// returns (the pool connects lazily, so the query is what fails).
func realPoolError(t testing.TB) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pool, err := pgxpool.New(ctx, "postgres://arr@"+closedPort(t)+"/arr?sslmode=disable&connect_timeout=5")
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	var one int
	err = pool.QueryRow(ctx, `SELECT 1`).Scan(&one)
	if err == nil {
		t.Fatal("a query on a closed port answered")
	}
	return fmt.Errorf("loading parcels: %w", err)
}

// realRefusal is what pgx returns when the server refuses a session:
// the test's own database with ALLOW_CONNECTIONS false (SQLSTATE 55000 at
// connect, "database … is not currently accepting connections").
func realRefusal(t *testing.T) error {
	t.Helper()
	dbURL := migratetest.NewDatabase(t)
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	admin, err := pgx.Connect(ctx, migratetest.AdminURL())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	if _, err := admin.Exec(ctx, "ALTER DATABASE "+pgx.Identifier{strings.TrimPrefix(u.Path, "/")}.Sanitize()+" ALLOW_CONNECTIONS false"); err != nil {
		t.Fatal(err)
	}
	pool, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	var one int
	err = pool.QueryRow(ctx, `SELECT 1`).Scan(&one)
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "55000" {
		t.Fatalf("a query on a database that allows no connections: %v, want SQLSTATE 55000", err)
	}
	return fmt.Errorf("loading the log head: %w", err)
}

func TestTranslateDB(t *testing.T) {
	closedPool := func() error {
		pool, err := pgxpool.New(context.Background(), "postgres://arr@127.0.0.1:1/arr?sslmode=disable")
		if err != nil {
			t.Fatal(err)
		}
		pool.Close()
		_, err = pool.Acquire(context.Background())
		return err
	}()
	tests := []struct {
		name        string
		err         error
		unavailable bool
	}{
		{"connect error on a closed loopback port", realConnectError(t), true},
		{"pool query on a closed loopback port, wrapped", realPoolError(t), true},
		{"closed pool", fmt.Errorf("listing keys: %w", closedPool), true},
		{"a database that refuses connections (55000 at connect)", realRefusal(t), true},
		{"database dropped 57P04", &pgconn.PgError{Code: "57P04", Message: "database is being dropped"}, true},
		{"idle session timeout 57P05", &pgconn.PgError{Code: "57P05"}, true},
		{"database does not exist 3D000", fmt.Errorf("q: %w", &pgconn.PgError{Code: "3D000", Message: "database \"arr\" does not exist"}), true},
		{"55000 on a statement is not an outage", &pgconn.PgError{Code: "55000", Message: "currval of sequence is not yet defined"}, false},
		{"connection exception 08006", &pgconn.PgError{Code: "08006", Message: "connection failure"}, true},
		{"cannot connect now 57P03", fmt.Errorf("q: %w", &pgconn.PgError{Code: "57P03", Message: "the database system is starting up"}), true},
		{"admin shutdown 57P01", &pgconn.PgError{Code: "57P01", Message: "terminating connection due to administrator command"}, true},
		{"crash shutdown 57P02", &pgconn.PgError{Code: "57P02"}, true},
		{"too many connections 53300", &pgconn.PgError{Code: "53300", Message: "sorry, too many clients already"}, true},
		{"disk full 53100", &pgconn.PgError{Code: "53100"}, true},
		{"conn closed", fmt.Errorf("scan: %w", pgconn.ErrConnClosed), true},
		{"net error", &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, true},
		{"server hung up under a call", fmt.Errorf("authenticating key: %w", io.ErrUnexpectedEOF), true},
		{"an HTTP client's network error", &url.Error{Op: "Post", URL: "http://127.0.0.1:9/v1/chat/completions", Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}}, false},
		{"unique violation 23505", &pgconn.PgError{Code: "23505"}, false},
		{"NUL in text 22021", &pgconn.PgError{Code: "22021", Message: "invalid byte sequence for encoding \"UTF8\": 0x00"}, false},
		{"query canceled 57014", &pgconn.PgError{Code: "57014"}, false},
		{"no rows", pgx.ErrNoRows, false},
		{"a deadline, not known to be the database's", fmt.Errorf("waiting: %w", context.DeadlineExceeded), false},
		{"domain error", domain.NotFound("list_not_found", "no list"), false},
		{"plain error", errors.New("boom"), false},
		{"nil", nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := httpx.TranslateDB(tc.err)
			if errors.Is(got, domain.ErrUnavailable) != tc.unavailable {
				t.Fatalf("TranslateDB(%v) = %v: unavailable %v, want %v", tc.err, got, !tc.unavailable, tc.unavailable)
			}
			if tc.err != nil && !errors.Is(got, tc.err) {
				t.Fatalf("TranslateDB(%v) = %v does not keep the cause", tc.err, got)
			}
			if !tc.unavailable && got != tc.err {
				t.Fatalf("TranslateDB changed an error that is not an outage: %v -> %v", tc.err, got)
			}
			p := httpx.ProblemOf(tc.err)
			if tc.unavailable && (p.Status != http.StatusServiceUnavailable || p.Code != "database_unavailable" || p.RetryAfter != httpx.DatabaseRetryAfter) {
				t.Fatalf("ProblemOf(%v) = %+v, want 503 database_unavailable with Retry-After %d", tc.err, p, httpx.DatabaseRetryAfter)
			}
		})
	}
}
