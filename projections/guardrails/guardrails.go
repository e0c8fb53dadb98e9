package guardrails

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/domain/guardrail"
	"github.com/arr-dev/arr/projections"
)

// Projection is the guardrails read model.
type Projection struct{}

// Name is the projection's name and checkpoint key.
const Name = "guardrails"

// ddl: one row per account (key_id the nil UUID) and per key with
// guardrails of its own.
const ddl = `
CREATE TABLE guardrails (
    account_id uuid        NOT NULL,
    key_id     uuid        NOT NULL,
    policy     jsonb       NOT NULL,
    set_at     timestamptz NOT NULL,
    position   bigint      NOT NULL,
    PRIMARY KEY (account_id, key_id)
);
`

// Channel is notified when the read model records a fault or is swapped
// for a rebuild (Spec.FailClosedChannel).
const Channel = "guardrails_changed"

// Spec implements projections.Projection. It fails closed, as identity
// does: guardrails guard what reaches an upstream, so a GuardrailsSet it
// cannot apply stops it rather than being parked and skipped.
func (Projection) Spec() projections.Spec {
	return projections.Spec{Name: Name, DDL: ddl, FailClosedChannel: Channel, Handlers: []projections.Handler{projections.On(set)}}
}

// set applies a GuardrailsSet: an upsert, or a delete when cleared.
func set(ctx context.Context, tx pgx.Tx, e projections.Event, v *account.GuardrailsSet) error {
	key := uuid.Nil
	if v.KeyID != nil {
		key = *v.KeyID
	}
	if v.Policy == nil {
		if _, err := tx.Exec(ctx, `DELETE FROM guardrails WHERE account_id = $1 AND key_id = $2`, v.AccountID, key); err != nil {
			return fmt.Errorf("clearing guardrails: %w", err)
		}
		return nil
	}
	b, err := json.Marshal(v.Policy)
	if err != nil {
		return fmt.Errorf("encoding guardrails: %w", err)
	}
	_, err = tx.Exec(ctx, `INSERT INTO guardrails (account_id, key_id, policy, set_at, position) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (account_id, key_id) DO UPDATE SET policy = excluded.policy, set_at = excluded.set_at, position = excluded.position`,
		v.AccountID, key, b, v.SetAt, int64(e.Position))
	if err != nil {
		return fmt.Errorf("setting guardrails: %w", err)
	}
	return nil
}

// Scope says whose guardrails apply to a key.
type Scope string

// The scopes.
const (
	ScopeNone    Scope = "none"
	ScopeAccount Scope = "account"
	ScopeKey     Scope = "key"
)

// Effective is the guardrails that apply to a key: its own, else its
// account's, else none.
type Effective struct {
	Policy guardrail.Policy
	Scope  Scope
	SetAt  time.Time
}

// Settings are an account's guardrails and its keys' own.
type Settings struct {
	Account *guardrail.Policy
	SetAt   *time.Time
	Keys    map[uuid.UUID]guardrail.Policy
}

// Queries reads the guardrails read model. Safe for concurrent use.
type Queries struct{ pool projections.DB }

// NewQueries returns the queries over the read model.
func NewQueries(pool projections.DB) *Queries { return &Queries{pool: pool} }

// blocked is a SQL expression that is true while the projection has a
// current fault: a GuardrailsSet at or past its checkpoint it cannot
// apply (as identity's identityBlocked).
const blocked = `EXISTS (SELECT 1 FROM public.projection_faults pf JOIN public.projection_checkpoints pc ON pc.name = pf.projection
	WHERE pf.projection = '` + Name + `' AND pc.position <= pf.position)`

// errBlocked refuses to answer while the read model cannot advance: the
// guardrails it holds may be older than the ones set (Spec.FailClosedChannel).
var errBlocked = &domain.Error{Kind: domain.ErrUnavailable, Code: "guardrails_unavailable",
	Message: "guardrails cannot be read right now: the guardrails read model cannot apply the log (operators see it in /healthz); retry shortly"}

// Effective returns the guardrails that apply to key of account. While
// the read model has a current fault it refuses (errBlocked) rather than
// answer from a policy that may be stale.
func (q *Queries) Effective(ctx context.Context, accountID, keyID uuid.UUID) (Effective, error) {
	var raw []byte
	var key *uuid.UUID
	var at *time.Time
	var stuck bool
	err := q.pool.QueryRow(ctx, `SELECT `+blocked+`, g.key_id, g.policy, g.set_at FROM (SELECT 1) one LEFT JOIN LATERAL (
		SELECT key_id, policy, set_at FROM rm_guardrails.guardrails
		WHERE account_id = $1 AND key_id IN ($2, '00000000-0000-0000-0000-000000000000') ORDER BY key_id = $2 DESC LIMIT 1) g ON true`,
		accountID, keyID).Scan(&stuck, &key, &raw, &at)
	if err != nil {
		return Effective{}, fmt.Errorf("reading guardrails: %w", err)
	}
	if stuck {
		return Effective{}, errBlocked
	}
	if key == nil {
		return Effective{Scope: ScopeNone}, nil
	}
	e := Effective{Scope: ScopeAccount, SetAt: at.UTC()}
	if *key == keyID && *key != uuid.Nil {
		e.Scope = ScopeKey
	}
	if err := json.Unmarshal(raw, &e.Policy); err != nil {
		return Effective{}, fmt.Errorf("reading guardrails: %w", err)
	}
	return e, nil
}

// Account returns an account's guardrails and its keys' own.
func (q *Queries) Account(ctx context.Context, accountID uuid.UUID) (Settings, error) {
	rows, err := q.pool.Query(ctx, `SELECT key_id, policy, set_at FROM rm_guardrails.guardrails WHERE account_id = $1`, accountID)
	if err != nil {
		return Settings{}, fmt.Errorf("reading guardrails: %w", err)
	}
	defer rows.Close()
	s := Settings{Keys: map[uuid.UUID]guardrail.Policy{}}
	for rows.Next() {
		var key uuid.UUID
		var raw []byte
		var at time.Time
		var p guardrail.Policy
		if err := rows.Scan(&key, &raw, &at); err != nil {
			return Settings{}, fmt.Errorf("reading guardrails: %w", err)
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			return Settings{}, fmt.Errorf("reading guardrails: %w", err)
		}
		if key == uuid.Nil {
			at := at.UTC()
			s.Account, s.SetAt = &p, &at
			continue
		}
		s.Keys[key] = p
	}
	if err := rows.Err(); err != nil {
		return Settings{}, fmt.Errorf("reading guardrails: %w", err)
	}
	return s, nil
}
