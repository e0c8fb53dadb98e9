package boundkey

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Record is what the database records of a key: never the key itself.
type Record struct {
	Purpose     Purpose `json:"purpose"`
	Fingerprint string  `json:"fingerprint"`
	// PublicKey is the base64 of a public key (the log's Ed25519 key);
	// empty for a secret key.
	PublicKey string    `json:"public_key,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	// CreatedBy says which process recorded it, on which host, and where
	// it found the key.
	CreatedBy string `json:"created_by"`
}

// Binder reads and records key fingerprints in a database.
type Binder struct {
	pool *pgxpool.Pool
}

// New returns a Binder over pool.
func New(pool *pgxpool.Pool) (*Binder, error) {
	if pool == nil {
		return nil, errors.New("boundkey: nil pool")
	}
	return &Binder{pool: pool}, nil
}

// Recorded returns the database's record of the key for p; ok is false
// when there is none.
func (b *Binder) Recorded(ctx context.Context, p Purpose) (r Record, ok bool, err error) {
	var pub *string
	err = b.pool.QueryRow(ctx, `SELECT fingerprint, public_key, created_at, created_by FROM key_fingerprints WHERE purpose = $1`, string(p)).
		Scan(&r.Fingerprint, &pub, &r.CreatedAt, &r.CreatedBy)
	if errors.Is(err, pgx.ErrNoRows) {
		return Record{}, false, nil
	}
	if err != nil {
		return Record{}, false, fmt.Errorf("reading the recorded fingerprint of the %s: %w", p, err)
	}
	r.Purpose, r.CreatedAt = p, r.CreatedAt.UTC()
	if pub != nil {
		r.PublicKey = *pub
	}
	return r, true, nil
}

// record records r unless the database has a record for its purpose
// already, and returns the one it has then (the first writer's).
func (b *Binder) record(ctx context.Context, r Record) (Record, error) {
	var pub *string
	if r.PublicKey != "" {
		pub = &r.PublicKey
	}
	if _, err := b.pool.Exec(ctx, `INSERT INTO key_fingerprints (purpose, fingerprint, public_key, created_by) VALUES ($1, $2, $3, $4)
		ON CONFLICT (purpose) DO NOTHING`, string(r.Purpose), r.Fingerprint, pub, r.CreatedBy); err != nil {
		return Record{}, fmt.Errorf("recording the fingerprint of the %s: %w", r.Purpose, err)
	}
	got, ok, err := b.Recorded(ctx, r.Purpose)
	if err != nil {
		return Record{}, err
	}
	if !ok {
		return Record{}, fmt.Errorf("the fingerprint of the %s was recorded, yet it cannot be read back", r.Purpose)
	}
	return got, nil
}
