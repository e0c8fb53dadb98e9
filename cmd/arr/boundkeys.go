package main

import (
	"context"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/arr-dev/arr/adapters/boundkey"
	"github.com/arr-dev/arr/adapters/datakeys"
	"github.com/arr-dev/arr/adapters/secretkey"
	"github.com/arr-dev/arr/domain/audit"
	"github.com/arr-dev/arr/eventstore/transparency"
	"github.com/arr-dev/arr/eventstore/transparency/verifier"
)

// The key files under ARR_DATA_DIR, used when the key's variable is unset.
const (
	masterKeyFile = "master.key"
	auditKeyFile  = "audit-hmac.key"
	logKeyFile    = "log-signing-key.pem"
)

// bindKeys gives the system the keys o asks for, each checked against
// the fingerprint its database records (package boundkey), at start: a
// process with another key, or with none where the database names one,
// stops here with exit 2 (ConfigErrors) and makes no key file.
func (s *system) bindKeys(ctx context.Context, o openOptions) error {
	if !o.contactKeys && !o.auditKey && !o.signingKey {
		return nil
	}
	b, err := boundkey.New(s.pool)
	if err != nil {
		return err
	}
	by := processName(o.by)
	if o.contactKeys {
		k, err := b.Bind(ctx, s.masterKeySpec(by))
		if err != nil {
			return keyRefused(err)
		}
		if s.keys, err = datakeys.New(s.pool, k.Material); err != nil {
			return err
		}
		s.cursorKey = cursorKey(k.Material)
	}
	if o.auditKey {
		k, err := b.Bind(ctx, s.secretSpec(boundkey.AuditHMACKey, "gateway audit hash key", "ARR_AUDIT_HMAC_KEY", s.cfg.AuditHMACKey, auditKeyFile, by))
		if err != nil {
			return keyRefused(err)
		}
		if s.auditKey, err = audit.NewHashKey(k.Material); err != nil {
			return err
		}
	}
	if _, err := s.merkleStore(); o.signingKey && err == nil { // (a store without a tree signs nothing)
		k, err := b.Bind(ctx, s.signingKeySpec(by))
		if err != nil {
			return keyRefused(err)
		}
		s.signingKey = ed25519.PrivateKey(k.Material)
	}
	return nil
}

// keyRefused makes a refused key a configuration error (exit 2).
func keyRefused(err error) error {
	if errors.Is(err, boundkey.ErrRefused) {
		return ConfigErrors{err}
	}
	return err
}

// processName names this process in the key records: the command, the
// host and the process id.
func processName(cmd string) string {
	if cmd == "" {
		cmd = "arr"
	}
	host, err := os.Hostname()
	if err != nil {
		host = "?"
	}
	return fmt.Sprintf("%s on host %s (pid %d)", cmd, host, os.Getpid())
}

// secretSpec is where a 32-byte secret key is found: the variable env
// (value), else ARR_DATA_DIR/file.
func (s *system) secretSpec(p boundkey.Purpose, name, env, value, file, by string) boundkey.Spec {
	return boundkey.Spec{
		Purpose: p, Name: name, Env: env, Value: value,
		File: filepath.Join(s.cfg.DataDir, file), DirEnv: "ARR_DATA_DIR", Dir: s.cfg.DataDir,
		Parse: func(text string) (boundkey.Key, error) {
			k, err := secretkey.Parse(text)
			if err != nil {
				return boundkey.Key{}, err
			}
			return boundkey.Key{Material: k, Fingerprint: boundkey.SecretFingerprint(p, k)}, nil
		},
		Generate: func() (boundkey.Key, []byte, error) {
			k, text, err := secretkey.New()
			if err != nil {
				return boundkey.Key{}, nil, err
			}
			return boundkey.Key{Material: k, Fingerprint: boundkey.SecretFingerprint(p, k)}, []byte(text), nil
		},
		By: by, Logger: s.log,
	}
}

// masterKeySpec is the records master key's: before a key is recorded, the
// data keys already stored must be wrapped by it (an installation from
// before the binding adopts the key its data was made with, never another).
func (s *system) masterKeySpec(by string) boundkey.Spec {
	spec := s.secretSpec(boundkey.RecordsMasterKey, "records master key", "ARR_MASTER_KEY", s.cfg.MasterKey, masterKeyFile, by)
	spec.Check = func(ctx context.Context, k boundkey.Key) error {
		ids, err := datakeys.MasterIDs(ctx, s.pool)
		if err != nil || len(ids) == 0 {
			return err
		}
		id := datakeys.MasterID(k.Material)
		if ids[id] == 0 {
			return &boundkey.RefusedError{Purpose: boundkey.RecordsMasterKey, Message: fmt.Sprintf(
				"the database holds data keys wrapped by other master keys (by master key id: %s), none by this key (id %s)", countsText(ids), id)}
		}
		delete(ids, id)
		if len(ids) > 0 {
			s.log.Warn("some accounts' data keys are wrapped by another master key: their contact data answers 503 contact_data_unavailable until that key is this process's",
				"other_master_keys", countsText(ids), "master_key_id", id)
		}
		return nil
	}
	return spec
}

// signingKeySpec is the event log's signing key's (Ed25519: PEM or base64
// of the seed; its fingerprint is its public key's, and the public key is
// recorded for `arr events verify`): before a key is recorded, the heads
// already kept must be signed by it.
func (s *system) signingKeySpec(by string) boundkey.Spec {
	fromPriv := func(priv ed25519.PrivateKey) boundkey.Key {
		pub := priv.Public().(ed25519.PublicKey)
		return boundkey.Key{Material: priv, Fingerprint: transparency.KeyFingerprint(pub), PublicKey: base64.StdEncoding.EncodeToString(pub)}
	}
	return boundkey.Spec{
		Purpose: boundkey.LogSigningKey, Name: "event log signing key", Env: "ARR_LOG_SIGNING_KEY", Value: s.cfg.LogSigningKey,
		File: filepath.Join(s.cfg.DataDir, logKeyFile), DirEnv: "ARR_DATA_DIR", Dir: s.cfg.DataDir,
		Parse: func(text string) (boundkey.Key, error) {
			priv, err := transparency.ParsePrivateKey(text)
			if err != nil {
				return boundkey.Key{}, err
			}
			return fromPriv(priv), nil
		},
		Generate: func() (boundkey.Key, []byte, error) {
			_, priv, err := ed25519.GenerateKey(rand.Reader)
			if err != nil {
				return boundkey.Key{}, nil, err
			}
			pem, err := transparency.MarshalPrivateKey(priv)
			if err != nil {
				return boundkey.Key{}, nil, err
			}
			return fromPriv(priv), pem, nil
		},
		Check: func(ctx context.Context, k boundkey.Key) error {
			st, err := s.merkleStore()
			if err != nil {
				return err
			}
			signers, err := st.HeadSigners(ctx)
			if err != nil || len(signers) == 0 {
				return err
			}
			byFP := map[string]int64{}
			for vk, n := range signers {
				fp := "an unreadable verifier key"
				if _, pub, err := verifier.ParseVerifierKey(vk); err == nil {
					fp = transparency.KeyFingerprint(pub)
				}
				byFP[fp] += n
			}
			if byFP[k.Fingerprint] == 0 {
				return &boundkey.RefusedError{Purpose: boundkey.LogSigningKey, Message: fmt.Sprintf(
					"the log's kept heads are signed by other keys (heads by key fingerprint: %s), none by this key", countsText(byFP))}
			}
			return nil
		},
		By: by, Logger: s.log,
	}
}

// recordedLogKey is the log's public key as the database records it; ok
// is false when no signing key is recorded yet.
func (s *system) recordedLogKey(ctx context.Context) (pub ed25519.PublicKey, rec boundkey.Record, ok bool, err error) {
	b, err := boundkey.New(s.pool)
	if err != nil {
		return nil, rec, false, err
	}
	rec, ok, err = b.Recorded(ctx, boundkey.LogSigningKey)
	if err != nil || !ok {
		return nil, rec, false, err
	}
	raw, err := base64.StdEncoding.DecodeString(rec.PublicKey)
	if err != nil || len(raw) != ed25519.PublicKeySize || transparency.KeyFingerprint(raw) != rec.Fingerprint {
		return nil, rec, false, fmt.Errorf("the log signing key's record (fingerprint %s) holds no public key of that fingerprint", rec.Fingerprint)
	}
	return ed25519.PublicKey(raw), rec, true, nil
}

// countsText writes counts by key as "a: 2, b: 1", sorted.
func countsText(m map[string]int64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s: %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

// cursorKey derives the records service's cursor key from the records
// master key: every process bound to the database has the same, and no
// other secret need be shared or stored.
func cursorKey(master []byte) []byte {
	m := hmac.New(sha256.New, master)
	m.Write([]byte("arr records paging cursors v1"))
	return m.Sum(nil)
}
