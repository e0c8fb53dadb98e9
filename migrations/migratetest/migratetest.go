package migratetest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/migrations"
)

// AdminURL is the server tests create their databases on: ARR_TEST_DATABASE_URL,
// else DATABASE_URL, else the local default of scripts/test.sh.
func AdminURL() string {
	for _, k := range []string{"ARR_TEST_DATABASE_URL", "DATABASE_URL"} {
		if v := os.Getenv(k); v != "" {
			return v
		}
	}
	return "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
}

// WithDatabase returns u with its database name replaced.
func WithDatabase(u, name string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	p.Path = "/" + name
	return p.String()
}

func schemaHash() string {
	h := sha256.New()
	var names []string
	_ = fs.WalkDir(migrations.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			names = append(names, p)
		}
		return nil
	})
	sort.Strings(names)
	for _, n := range names {
		b, _ := fs.ReadFile(migrations.FS(), n)
		h.Write([]byte(n))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// NewDatabase creates a fresh, migrated database for the test, drops it when
// the test ends, and returns its URL. It fails the test, saying what to
// start, if PostgreSQL is not reachable.
func NewDatabase(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: needs PostgreSQL with PostGIS; runs without -short (scripts/test.sh)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin := AdminURL()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatalf("PostgreSQL with PostGIS is not reachable at %s (%v): start it with scripts/test.sh, or set ARR_TEST_DATABASE_URL", admin, err)
	}
	defer conn.Close(context.Background())
	template := "arr_tmpl_" + schemaHash()
	if err := ensureTemplate(ctx, conn, admin, template); err != nil {
		t.Fatalf("building template database: %v", err)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "arr_test_" + hex.EncodeToString(b)
	// The template allows no connections, so cloning cannot collide with a
	// user of it; retry briefly in case it is being built right now.
	var lastErr error
	for i := 0; i < 50; i++ {
		if _, lastErr = conn.Exec(ctx, fmt.Sprintf(`CREATE DATABASE %s TEMPLATE %s`, name, template)); lastErr == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if lastErr != nil {
		t.Fatalf("creating test database: %v", lastErr)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, admin)
		if err != nil {
			return
		}
		defer c.Close(ctx)
		_, _ = c.Exec(ctx, fmt.Sprintf(`DROP DATABASE IF EXISTS %s WITH (FORCE)`, name))
	})
	return WithDatabase(admin, name)
}

// NewPool is NewDatabase plus a pool on it, closed when the test ends.
func NewPool(t testing.TB) (*pgxpool.Pool, string) {
	t.Helper()
	u := NewDatabase(t)
	pool, err := pgxpool.New(context.Background(), u)
	if err != nil {
		t.Fatalf("connecting to test database: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool, u
}

func ensureTemplate(ctx context.Context, conn *pgx.Conn, admin, template string) error {
	// One builder at a time across test processes.
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock(727274)`); err != nil {
		return err
	}
	defer conn.Exec(context.Background(), `SELECT pg_advisory_unlock(727274)`) //nolint:errcheck
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1 AND datistemplate)`, template).Scan(&exists); err != nil {
		return err
	}
	if exists {
		return nil
	}
	building := template + "_build"
	if _, err := conn.Exec(ctx, fmt.Sprintf(`DROP DATABASE IF EXISTS %s WITH (FORCE)`, building)); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, fmt.Sprintf(`CREATE DATABASE %s`, building)); err != nil {
		return err
	}
	pool, err := pgxpool.New(ctx, WithDatabase(admin, building))
	if err != nil {
		return err
	}
	err = migrations.Apply(ctx, pool, nil)
	pool.Close()
	if err != nil {
		return fmt.Errorf("%w (is PostGIS installed? scripts/test.sh installs it)", err)
	}
	if _, err := conn.Exec(ctx, fmt.Sprintf(`ALTER DATABASE %s RENAME TO %s`, building, template)); err != nil {
		return err
	}
	_, err = conn.Exec(ctx, fmt.Sprintf(`ALTER DATABASE %s WITH IS_TEMPLATE true ALLOW_CONNECTIONS false`, template))
	return err
}
