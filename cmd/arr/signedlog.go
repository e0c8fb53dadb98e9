package main

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/eventstore/postgres"
	"github.com/arr-dev/arr/eventstore/signedlog"
	"github.com/arr-dev/arr/eventstore/transparency"
)

// logKeyFile is where the log's signing key lives when ARR_LOG_SIGNING_KEY
// is unset.
const logKeyFile = "log-signing-key.pem"

// merkleStore is the event store as the signed log needs it: the
// PostgreSQL store, the only one that keeps a tree.
func (s *system) merkleStore() (*postgres.Store, error) {
	st, ok := s.store.(*postgres.Store)
	if !ok {
		return nil, eventstore.ErrNoMerkleTree
	}
	return st, nil
}

// logSigningKey reads ARR_LOG_SIGNING_KEY, else the key file under
// ARR_DATA_DIR, which create makes (mode 0600) when it is missing. Without
// create, a missing file is (nil, nil).
func logSigningKey(cfg Config, create bool, log *slog.Logger) (ed25519.PrivateKey, error) {
	if cfg.LogSigningKey != "" {
		priv, err := transparency.ParsePrivateKey(cfg.LogSigningKey)
		if err != nil {
			return nil, fmt.Errorf("ARR_LOG_SIGNING_KEY: %w", err)
		}
		return priv, nil
	}
	path := filepath.Join(cfg.DataDir, logKeyFile)
	if !create {
		priv, err := transparency.LoadKeyFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return priv, err
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("ARR_DATA_DIR: %w", err)
	}
	priv, generated, err := transparency.LoadOrGenerateKeyFile(path)
	if err != nil {
		return nil, err
	}
	if generated {
		log.Warn("generated the event log's signing key: keep it safe and back it up, and give every process that signs this log's heads the same key (ARR_LOG_SIGNING_KEY)", "file", path)
	}
	return priv, nil
}

// logSigner builds the signer of the log's heads.
func (s *system) logSigner(log *slog.Logger) (*signedlog.Signer, error) {
	st, err := s.merkleStore()
	if err != nil {
		return nil, err
	}
	key, err := logSigningKey(s.cfg, true, log)
	if err != nil {
		return nil, err
	}
	return signedlog.NewSigner(st, st, signedlog.SignerConfig{
		Key: key, Origin: s.cfg.LogOrigin, Every: uint64(s.cfg.LogCheckpointEvery), Interval: s.cfg.LogCheckpointTime,
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
