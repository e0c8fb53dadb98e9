package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// server creates and drops the benchmark's databases.
type server struct {
	adminURL string
}

func withDatabase(u, name string) (string, error) {
	p, err := url.Parse(u)
	if err != nil {
		return "", fmt.Errorf("parsing database url: %w", err)
	}
	p.Path = "/" + name
	return p.String(), nil
}

// database is a fresh database on the server.
type database struct {
	name, url string
	drop      func()
}

// fresh creates an empty database; drop removes it.
func (s server) fresh(ctx context.Context, prefix string) (database, error) {
	conn, err := pgx.Connect(ctx, s.adminURL)
	if err != nil {
		return database{}, fmt.Errorf("connecting to %s: %w", s.adminURL, err)
	}
	defer conn.Close(context.Background())
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	name := prefix + "_" + hex.EncodeToString(b)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return database{}, fmt.Errorf("creating database %s: %w", name, err)
	}
	u, err := withDatabase(s.adminURL, name)
	if err != nil {
		return database{}, err
	}
	drop := func() {
		c, err := pgx.Connect(context.Background(), s.adminURL)
		if err != nil {
			return
		}
		defer c.Close(context.Background())
		_, _ = c.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	}
	return database{name: name, url: u, drop: drop}, nil
}

// settle checkpoints so that one run's dirty pages are not flushed during
// the next.
func (s server) settle(ctx context.Context) error {
	conn, err := pgx.Connect(ctx, s.adminURL)
	if err != nil {
		return fmt.Errorf("connecting to %s: %w", s.adminURL, err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "CHECKPOINT"); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

// info describes the server for the summary.
func (s server) info(ctx context.Context) (map[string]string, error) {
	conn, err := pgx.Connect(ctx, s.adminURL)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", s.adminURL, err)
	}
	defer conn.Close(context.Background())
	out := map[string]string{}
	var v string
	if err := conn.QueryRow(ctx, "SELECT version()").Scan(&v); err != nil {
		return nil, fmt.Errorf("reading server version: %w", err)
	}
	out["version"] = v
	for _, k := range []string{"shared_buffers", "synchronous_commit", "fsync", "wal_sync_method", "max_connections", "commit_delay"} {
		if err := conn.QueryRow(ctx, "SELECT current_setting($1)", k).Scan(&v); err != nil {
			return nil, fmt.Errorf("reading %s: %w", k, err)
		}
		out[k] = v
	}
	return out, nil
}

func newPool(ctx context.Context, u string, maxConns int, tracer pgx.QueryTracer) (*pgxpool.Pool, error) {
	pc, err := pgxpool.ParseConfig(u)
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", u, err)
	}
	pc.MaxConns = int32(maxConns)
	if tracer != nil {
		pc.ConnConfig.Tracer = tracer
	}
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", u, err)
	}
	return pool, nil
}
