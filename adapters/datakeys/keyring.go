package datakeys

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/adapters/secretkey"
	"github.com/arr-dev/arr/domain/records"
)

// ErrShredded is returned when an account's data key was destroyed (or
// never made): what it sealed cannot be opened.
var ErrShredded = records.ErrDataKeyDestroyed

// ErrUnavailable is returned when an account's data key exists but cannot
// be unwrapped: it is wrapped by another master key than this process's,
// or damaged. Nothing can be sealed or opened for the account until the
// operator gives the process the master key it was made with.
var ErrUnavailable = records.ErrContactDataUnavailable

// Keyring seals and opens with per-account data keys.
type Keyring struct {
	pool     *pgxpool.Pool
	master   cipher.AEAD
	masterID string
}

// MasterKeySize is the master key's length in bytes. The master key is
// read and made by package secretkey, and bound to the database by
// package boundkey.
const MasterKeySize = secretkey.Size

// MasterID is the short id of a master key that each data key's row
// records (master_id): the first 6 bytes of SHA-256("arr-master-key-id:"
// || key), in hex. It names the key without revealing it.
func MasterID(master []byte) string {
	sum := sha256.Sum256(append([]byte("arr-master-key-id:"), master...))
	return hex.EncodeToString(sum[:6])
}

// MasterIDs counts the data keys stored, by the id of the master key that
// wraps them.
func MasterIDs(ctx context.Context, pool *pgxpool.Pool) (map[string]int64, error) {
	rows, err := pool.Query(ctx, `SELECT master_id, count(*) FROM records_data_keys GROUP BY master_id`)
	if err != nil {
		return nil, fmt.Errorf("counting the data keys: %w", err)
	}
	ids := map[string]int64{}
	var id string
	var n int64
	if _, err := pgx.ForEachRow(rows, []any{&id, &n}, func() error { ids[id] = n; return nil }); err != nil {
		return nil, fmt.Errorf("counting the data keys: %w", err)
	}
	return ids, nil
}

// New returns a keyring over pool with the master key.
func New(pool *pgxpool.Pool, master []byte) (*Keyring, error) {
	if pool == nil {
		return nil, errors.New("datakeys: nil pool")
	}
	aead, err := newAEAD(master)
	if err != nil {
		return nil, fmt.Errorf("datakeys: master key: %w", err)
	}
	return &Keyring{pool: pool, master: aead, masterID: MasterID(master)}, nil
}

func newAEAD(key []byte) (cipher.AEAD, error) {
	if len(key) != MasterKeySize {
		return nil, fmt.Errorf("key is %d bytes, want %d", len(key), MasterKeySize)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

func seal(a cipher.AEAD, plain, ad []byte) ([]byte, error) {
	nonce := make([]byte, a.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	return a.Seal(nonce, nonce, plain, ad), nil
}

func open(a cipher.AEAD, sealed, ad []byte) ([]byte, error) {
	if len(sealed) < a.NonceSize() {
		return nil, errors.New("sealed value too short")
	}
	return a.Open(nil, sealed[:a.NonceSize()], sealed[a.NonceSize():], ad)
}

// key returns the account's data key; create makes one when there is none.
func (k *Keyring) key(ctx context.Context, account uuid.UUID, create bool) (cipher.AEAD, error) {
	var wrapped []byte
	var masterID string
	err := k.pool.QueryRow(ctx, `SELECT wrapped_key, master_id FROM records_data_keys WHERE account_id = $1`, account).Scan(&wrapped, &masterID)
	if errors.Is(err, pgx.ErrNoRows) {
		if !create {
			return nil, ErrShredded
		}
		dk := make([]byte, 32)
		if _, err := rand.Read(dk); err != nil {
			return nil, err
		}
		w, err := seal(k.master, dk, account[:])
		if err != nil {
			return nil, err
		}
		// Two first imports at once: one key wins, both use it.
		if _, err := k.pool.Exec(ctx, `INSERT INTO records_data_keys (account_id, wrapped_key, master_id) VALUES ($1, $2, $3)
			ON CONFLICT (account_id) DO NOTHING`, account, w, k.masterID); err != nil {
			return nil, fmt.Errorf("storing a data key: %w", err)
		}
		return k.key(ctx, account, false)
	}
	if err != nil {
		return nil, fmt.Errorf("loading a data key: %w", err)
	}
	if masterID != k.masterID {
		return nil, fmt.Errorf("the data key of account %s is wrapped by master key %s, not by this process's (%s): %w", account, masterID, k.masterID, ErrUnavailable)
	}
	dk, err := open(k.master, wrapped, account[:])
	if err != nil {
		return nil, fmt.Errorf("unwrapping the data key of account %s with master key %s: %v: %w", account, k.masterID, err, ErrUnavailable)
	}
	return newAEAD(dk)
}

// Sealer seals values for one account. Not safe for concurrent use.
type Sealer struct {
	aead    cipher.AEAD
	account uuid.UUID
}

// Sealer returns a sealer with the account's data key, creating the key
// on first use.
func (k *Keyring) Sealer(ctx context.Context, account uuid.UUID) (*Sealer, error) {
	a, err := k.key(ctx, account, true)
	if err != nil {
		return nil, err
	}
	return &Sealer{aead: a, account: account}, nil
}

// Seal encrypts plain; the account id is bound in as associated data.
func (s *Sealer) Seal(plain []byte) ([]byte, error) { return seal(s.aead, plain, s.account[:]) }

// Opener opens values of one account.
type Opener struct {
	aead    cipher.AEAD
	account uuid.UUID
}

// Opener returns an opener with the account's data key, or ErrShredded
// when the key was destroyed.
func (k *Keyring) Opener(ctx context.Context, account uuid.UUID) (*Opener, error) {
	a, err := k.key(ctx, account, false)
	if err != nil {
		return nil, err
	}
	return &Opener{aead: a, account: account}, nil
}

// Open decrypts what Seal made.
func (o *Opener) Open(sealed []byte) ([]byte, error) { return open(o.aead, sealed, o.account[:]) }

// Destroy deletes the account's data key for good. It reports whether there
// was one.
func (k *Keyring) Destroy(ctx context.Context, account uuid.UUID) (bool, error) {
	tag, err := k.pool.Exec(ctx, `DELETE FROM records_data_keys WHERE account_id = $1`, account)
	if err != nil {
		return false, fmt.Errorf("destroying the data key: %w", err)
	}
	return tag.RowsAffected() > 0, nil
}
