package identity

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/projections"
)

// Projection is the read model of accounts and their API keys: it answers
// authentication (a key's SHA-256 to its account) and key listings.
type Projection struct{}

// Name is the identity projection's name and checkpoint key.
const Name = "identity"

// ddl is the read model's tables.
const ddl = `
CREATE TABLE accounts (
    account_id         uuid        PRIMARY KEY,
    email              text        COLLATE "C" NOT NULL,
    plan               text        NOT NULL,
    created_at         timestamptz NOT NULL,
    stripe_customer_id text,
    plan_changed_at    timestamptz,
    budget_micro_usd   bigint      NOT NULL DEFAULT 0,
    budget_period      text        NOT NULL DEFAULT '',
    position           bigint      NOT NULL
);
CREATE TABLE sessions (
    session_id uuid        PRIMARY KEY,
    account_id uuid        NOT NULL,
    service    text        NOT NULL,
    token_hash text        COLLATE "C" NOT NULL,
    started_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    ended_at   timestamptz,
    position   bigint      NOT NULL
);
CREATE TABLE api_keys (
    key_id      uuid        PRIMARY KEY,
    account_id  uuid        NOT NULL,
    service     text        NOT NULL,
    prefix      text        NOT NULL,
    hint        text        NOT NULL,
    secret_hash text        COLLATE "C" NOT NULL,
    name        text        NOT NULL DEFAULT '',
    issued_at   timestamptz NOT NULL,
    revoked_at  timestamptz,
    max_budget_micro_usd bigint NOT NULL DEFAULT 0,
    budget_period        text   NOT NULL DEFAULT '',
    rpm_limit            bigint NOT NULL DEFAULT 0,
    tpm_limit            bigint NOT NULL DEFAULT 0,
    models               text[] NOT NULL DEFAULT '{}',
    expires_at           timestamptz,
    position    bigint      NOT NULL
);
`

// deferredDDL is the read model's secondary indexes.
const deferredDDL = `
CREATE UNIQUE INDEX accounts_email ON accounts (email);
CREATE UNIQUE INDEX api_keys_secret_hash ON api_keys (secret_hash);
CREATE INDEX api_keys_account ON api_keys (account_id, service);
CREATE UNIQUE INDEX sessions_token_hash ON sessions (token_hash);
CREATE INDEX accounts_stripe_customer ON accounts (stripe_customer_id) WHERE stripe_customer_id IS NOT NULL;
`

// Spec implements projections.Projection. Identity fails closed
// (Spec.FailClosedChannel): it never parks an event, and while it cannot
// advance, Authenticate and SessionByToken refuse with 503 instead of
// trusting a read model that may miss a revocation or a plan change.
func (Projection) Spec() projections.Spec {
	return projections.Spec{Name: Name, DDL: ddl, DeferredDDL: deferredDDL, FailClosedChannel: Channel, Batch: newBatch}
}

// identityBlocked is a SQL expression that is true while the identity
// projection has a current fault: a failed batch at or past its checkpoint.
const identityBlocked = `EXISTS (SELECT 1 FROM public.projection_faults pf JOIN public.projection_checkpoints pc ON pc.name = pf.projection
	WHERE pf.projection = '` + Name + `' AND pc.position <= pf.position)`

// errIdentityBlocked refuses credentials while identity cannot advance.
var errIdentityBlocked = &domain.Error{Kind: domain.ErrUnavailable, Code: "identity_unavailable",
	Message: "credentials cannot be checked right now: the identity read model cannot apply the log (operators see it in /healthz); retry shortly"}

// Principal is who a valid API key speaks for.
type Principal struct {
	KeyID     uuid.UUID       `json:"key_id"`
	AccountID uuid.UUID       `json:"account_id"`
	Email     string          `json:"email"`
	Plan      account.Plan    `json:"plan"`
	Service   account.Service `json:"service"`
	Prefix    string          `json:"prefix"`
	Hint      string          `json:"hint"`
	Name      string          `json:"name"`
	IssuedAt  time.Time       `json:"issued_at"`
	// Limits are the key's own limits; AccountBudget the budget its
	// account's keys share.
	Limits        account.KeyLimits `json:"-"`
	AccountBudget account.Budget    `json:"-"`
}

// KeyInfo is an API key as listed to its owner or an operator: never the
// secret, never its hash.
type KeyInfo struct {
	ID        uuid.UUID         `json:"id"`
	AccountID uuid.UUID         `json:"account_id"`
	Service   account.Service   `json:"service"`
	Prefix    string            `json:"prefix"`
	Hint      string            `json:"hint"`
	Name      string            `json:"name"`
	CreatedAt time.Time         `json:"created_at"`
	RevokedAt *time.Time        `json:"revoked_at"`
	Limits    account.KeyLimits `json:"-"`
}

// AccountInfo is an account as the read model holds it.
type AccountInfo struct {
	ID        uuid.UUID    `json:"id"`
	Email     string       `json:"email"`
	Plan      account.Plan `json:"plan"`
	CreatedAt time.Time    `json:"created_at"`
}

// Queries reads the identity read model. Safe for concurrent use.
type Queries struct {
	pool  *pgxpool.Pool
	cache *keyCache
	now   func() time.Time
}

// NewQueries returns the queries over the identity read model. Keys are
// looked up per request until ListenForChanges runs.
func NewQueries(pool *pgxpool.Pool) *Queries {
	return &Queries{pool: pool, cache: newKeyCache(), now: time.Now}
}

// ListenForChanges lets Authenticate answer from memory while it runs (until
// ctx ends): it listens on Channel, on which every committed identity
// batch is announced, and forgets every cached principal on each
// announcement and whenever it is not listening. A revocation or plan change
// committed by any process is thus seen by this one as soon as PostgreSQL
// delivers the notification (well under a millisecond on one host); Forget
// makes it synchronous for writes this process waited for.
func (q *Queries) ListenForChanges(ctx context.Context, warn func(msg string, args ...any)) {
	q.cache.listen(ctx, q.pool, warn)
}

// Forget drops every cached principal, at once. Call it after waiting for
// the identity read model to show a write, so the next request of this
// process cannot be answered from before it.
func (q *Queries) Forget() { q.cache.invalidate() }

// Authenticate maps a presented secret to its principal. A secret that is
// unknown, revoked or for another service is domain.ErrUnauthenticated; the
// secret itself is never logged or stored.
func (q *Queries) Authenticate(ctx context.Context, secret string, svc account.Service) (Principal, error) {
	got, ok := account.LooksLikeKey(secret)
	if !ok || got != svc {
		return Principal{}, unauthenticated(svc)
	}
	hash := account.HashSecret(secret)
	now := q.now()
	p, ok, gen := q.cache.get(hash, svc, now)
	if ok {
		return p, expired(p, now)
	}
	var found bool
	var ride func(*pgx.Batch)
	if r := riderOf(ctx); r != nil {
		ride = func(b *pgx.Batch) { r.Ride(b, hash, svc, now) }
	}
	blocked, err := q.lookup(ctx, ride, `
		SELECT k.key_id, k.account_id, a.email, a.plan, k.service, k.prefix, k.hint, k.name, k.issued_at,
			`+limitColumns+`, a.budget_micro_usd, a.budget_period
		FROM rm_identity.api_keys k JOIN rm_identity.accounts a USING (account_id)
		WHERE k.secret_hash = $1 AND k.revoked_at IS NULL`, []any{hash}, func(row pgx.Row) error {
		var l limitsScan
		err := row.Scan(append([]any{&p.KeyID, &p.AccountID, &p.Email, &p.Plan, &p.Service, &p.Prefix, &p.Hint, &p.Name, &p.IssuedAt},
			append(l.dest(), &p.AccountBudget.Max, &p.AccountBudget.Period)...)...)
		p.Limits = l.limits()
		found = err == nil
		return err
	})
	switch {
	case err != nil:
		return Principal{}, fmt.Errorf("authenticating key: %w", err)
	case blocked:
		return Principal{}, errIdentityBlocked
	case !found || p.Service != svc:
		return Principal{}, unauthenticated(svc)
	}
	p.IssuedAt = p.IssuedAt.UTC()
	q.cache.put(hash, p, gen, now)
	return p, expired(p, now)
}

// expired refuses a key whose expiry has passed: 401 key_expired.
func expired(p Principal, now time.Time) error {
	if !p.Limits.Expired(now) {
		return nil
	}
	return &domain.Error{Kind: domain.ErrUnauthenticated, Code: "key_expired",
		Message: fmt.Sprintf("this API key expired at %s; mint a new one, or extend it (PATCH /v1/me/keys/%s with expires_at)", p.Limits.ExpiresAt.Format(time.RFC3339), p.KeyID)}
}

// lookup runs a credential query (one row or none, scanned by scan) and,
// in the same round trip, asks whether identity is blocked (fail closed).
// No row is not an error.
// ride, if set, queues more statements after both (a Rider).
func (q *Queries) lookup(ctx context.Context, ride func(*pgx.Batch), sql string, args []any, scan func(pgx.Row) error) (blocked bool, err error) {
	b := &pgx.Batch{}
	b.Queue(`SELECT ` + identityBlocked).QueryRow(func(row pgx.Row) error { return row.Scan(&blocked) })
	b.Queue(sql, args...).QueryRow(func(row pgx.Row) error {
		if err := scan(row); err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		return nil
	})
	if ride != nil {
		ride(b)
	}
	return blocked, q.pool.SendBatch(ctx, b).Close()
}

func unauthenticated(svc account.Service) error {
	return &domain.Error{Kind: domain.ErrUnauthenticated, Code: "invalid_api_key",
		Message: fmt.Sprintf("the API key is missing, malformed, revoked or not a %s key (keys for this service start with %s)", svc, svc.KeyPrefix())}
}

// AccountByEmail finds an account by its normalized e-mail address.
func (q *Queries) AccountByEmail(ctx context.Context, email string) (AccountInfo, error) {
	var a AccountInfo
	err := q.pool.QueryRow(ctx, `SELECT account_id, email, plan, created_at FROM rm_identity.accounts WHERE email = $1`, email).
		Scan(&a.ID, &a.Email, &a.Plan, &a.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return a, domain.NotFound("account_not_found", "no account for %s", email)
	}
	if err != nil {
		return a, fmt.Errorf("finding account: %w", err)
	}
	a.CreatedAt = a.CreatedAt.UTC()
	return a, nil
}

// Key returns one key by id.
func (q *Queries) Key(ctx context.Context, id uuid.UUID) (KeyInfo, error) {
	ks, err := q.keys(ctx, `WHERE key_id = $1`, id)
	if err != nil {
		return KeyInfo{}, err
	}
	if len(ks) == 0 {
		return KeyInfo{}, domain.NotFound("key_not_found", "no key %s", id)
	}
	return ks[0], nil
}

// Keys lists an account's keys, newest first, revoked ones included.
func (q *Queries) Keys(ctx context.Context, accountID uuid.UUID) ([]KeyInfo, error) {
	return q.keys(ctx, `WHERE account_id = $1 ORDER BY issued_at DESC, key_id`, accountID)
}

func (q *Queries) keys(ctx context.Context, where string, arg any) ([]KeyInfo, error) {
	rows, err := q.pool.Query(ctx, `SELECT key_id, account_id, service, prefix, hint, name, issued_at, revoked_at, `+limitColumns+` FROM rm_identity.api_keys k `+where, arg)
	if err != nil {
		return nil, fmt.Errorf("listing keys: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (KeyInfo, error) {
		var k KeyInfo
		var l limitsScan
		err := r.Scan(append([]any{&k.ID, &k.AccountID, &k.Service, &k.Prefix, &k.Hint, &k.Name, &k.CreatedAt, &k.RevokedAt}, l.dest()...)...)
		k.Limits = l.limits()
		k.CreatedAt = k.CreatedAt.UTC()
		if k.RevokedAt != nil {
			t := k.RevokedAt.UTC()
			k.RevokedAt = &t
		}
		return k, err
	})
	if err != nil {
		return nil, fmt.Errorf("listing keys: %w", err)
	}
	return out, nil
}
