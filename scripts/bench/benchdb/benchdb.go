// Package benchdb gives a benchmark a migrated database of its own on a
// PostgreSQL server, dropped when the benchmark is done.
package benchdb

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/migrations"
	"github.com/arr-dev/arr/migrations/migratetest"
)

// DB is a migrated scratch database.
type DB struct {
	Name, URL string
	Pool      *pgxpool.Pool
	admin     *pgx.Conn
}

// Create makes a database named prefix_<random hex> on the server of
// admin (a connection URL), migrates it and opens a pool on it.
func Create(ctx context.Context, admin, prefix string) (*DB, error) {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	d := &DB{Name: prefix + "_" + hex.EncodeToString(b)}
	d.URL = migratetest.WithDatabase(admin, d.Name)
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", admin, err)
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+d.Name); err != nil {
		_ = conn.Close(context.Background())
		return nil, fmt.Errorf("creating the benchmark database: %w", err)
	}
	d.admin = conn
	if d.Pool, err = pgxpool.New(ctx, d.URL); err != nil {
		d.Close()
		return nil, err
	}
	if err := migrations.Apply(ctx, d.Pool, nil); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// Close closes the pool and drops the database.
func (d *DB) Close() {
	if d.Pool != nil {
		d.Pool.Close()
	}
	_, _ = d.admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+d.Name+" WITH (FORCE)")
	_ = d.admin.Close(context.Background())
}
