package main

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"

	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/eventstore/postgres"
	"github.com/arr-dev/arr/eventstore/signedlog"
	"github.com/arr-dev/arr/eventstore/transparency"
)

// merkleStore is the event store as the signed log needs it: the
// PostgreSQL store, the only one that keeps a tree.
func (s *system) merkleStore() (*postgres.Store, error) {
	st, ok := s.store.(*postgres.Store)
	if !ok {
		return nil, eventstore.ErrNoMerkleTree
	}
	return st, nil
}

// configuredLogKey reads ARR_LOG_SIGNING_KEY, else the key file under
// ARR_DATA_DIR; it makes nothing and checks nothing against the database
// (for `arr events verify` on a log whose key no process recorded yet).
// Without either it returns nil.
func configuredLogKey(cfg Config) (ed25519.PrivateKey, error) {
	if cfg.LogSigningKey != "" {
		priv, err := transparency.ParsePrivateKey(cfg.LogSigningKey)
		if err != nil {
			return nil, fmt.Errorf("ARR_LOG_SIGNING_KEY: %w", err)
		}
		return priv, nil
	}
	priv, err := transparency.LoadKeyFile(filepath.Join(cfg.DataDir, logKeyFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return priv, err
}

// logSigner builds the signer of the log's heads.
func (s *system) logSigner(log *slog.Logger) (*signedlog.Signer, error) {
	st, err := s.merkleStore()
	if err != nil {
		return nil, err
	}
	if s.signingKey == nil {
		return nil, errors.New("the event log's signing key was not loaded (openOptions.signingKey)")
	}
	return signedlog.NewSigner(st, st, signedlog.SignerConfig{
		Key: s.signingKey, Origin: s.cfg.LogOrigin, Every: uint64(s.cfg.LogCheckpointEvery), Interval: s.cfg.LogCheckpointTime,
		Now: s.now, Logger: log,
	})
}

// logProver builds what the gateway serves /v1/log from; nil for a store
// without a tree.
func (s *system) logProver() (*signedlog.Prover, error) {
	st, err := s.merkleStore()
	if err != nil {
		return nil, nil
	}
	return signedlog.NewProver(st, st)
}
