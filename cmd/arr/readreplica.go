package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/adapters/replica"
	"github.com/arr-dev/arr/projections"
)

// The replica router is what the read models' queries run through.
var _ projections.DB = (*replica.Router)(nil)

// openReplica connects to ARR_READ_DATABASE_URL, when set, and makes the
// router the read models are read through.
func (s *system) openReplica(ctx context.Context) error {
	if s.cfg.ReadDatabaseURL == "" {
		return nil
	}
	pcfg, err := pgxpool.ParseConfig(s.cfg.ReadDatabaseURL)
	if err != nil {
		return errors.New("ARR_READ_DATABASE_URL does not parse as a PostgreSQL URL") // (Validate refuses it first; the value may hold a password)
	}
	if err := poolSize(pcfg, s.cfg.ReadDatabaseURL, "ARR_READ_DATABASE_URL"); err != nil {
		return err
	}
	if pcfg.ConnConfig.ConnectTimeout == 0 || pcfg.ConnConfig.ConnectTimeout > 2*time.Second {
		// A replica that does not answer sends reads to the primary; a
		// connection attempt must not hold a request longer than this.
		pcfg.ConnConfig.ConnectTimeout = 2 * time.Second
	}
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return fmt.Errorf("the read replica: %w", err)
	}
	s.closers = append(s.closers, pool.Close)
	if s.replica, err = replica.New(replica.Config{Primary: s.pool, Replica: pool, MaxLag: s.cfg.ReadMaxLag, Logger: s.log}); err != nil {
		return err
	}
	s.log.Info("reading the read models from a streaming replica while it lags by at most ARR_READ_MAX_LAG",
		"replica", fmt.Sprintf("%s:%d", pcfg.ConnConfig.Host, pcfg.ConnConfig.Port), "max_lag", s.cfg.ReadMaxLag)
	return nil
}

// replicaHealth is the replica's state for /healthz.
func (s *system) replicaHealth() projections.ReplicaHealth {
	h := s.replica.Health()
	return projections.ReplicaHealth{State: h.State, Reads: h.Reads, LagSeconds: h.LagSeconds, MaxLagSeconds: h.MaxLagSeconds,
		ReplayLSN: h.ReplayLSN, PrimaryLSN: h.PrimaryLSN, CheckedAt: h.CheckedAt, Error: h.Error}
}
