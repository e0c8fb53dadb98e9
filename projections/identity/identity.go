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
	"github.com/arr-dev/arr/domain/signin"
	"github.com/arr-dev/arr/projections"
)

// Projection is the read model of accounts and their API keys: it answers
// authentication (a key's SHA-256 to its account) and key listings.
type Projection struct{}

// Name is the identity projection's name and checkpoint key.
const Name = "identity"

// Name implements Projection.
func (Projection) Name() string { return Name }

// DDL implements Projection.
func (Projection) DDL() string {
	return `
CREATE TABLE accounts (
    account_id         uuid        PRIMARY KEY,
    email              text        COLLATE "C" NOT NULL,
    plan               text        NOT NULL,
    created_at         timestamptz NOT NULL,
    stripe_customer_id text,
    plan_changed_at    timestamptz,
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
    position    bigint      NOT NULL
);
`
}

// DeferredDDL implements IndexDeferrer.
func (Projection) DeferredDDL() string {
	return `
CREATE UNIQUE INDEX accounts_email ON accounts (email);
CREATE UNIQUE INDEX api_keys_secret_hash ON api_keys (secret_hash);
CREATE INDEX api_keys_account ON api_keys (account_id, service);
CREATE UNIQUE INDEX sessions_token_hash ON sessions (token_hash);
CREATE INDEX accounts_stripe_customer ON accounts (stripe_customer_id) WHERE stripe_customer_id IS NOT NULL;
`
}

// EventTypes implements EventFilter.
func (Projection) EventTypes() []string {
	return []string{
		account.AccountCreated{}.EventType(),
		account.PlanChanged{}.EventType(),
		signin.SessionStarted{}.EventType(),
		signin.SessionEnded{}.EventType(),
		account.KeyIssued{}.EventType(),
		account.KeyRevoked{}.EventType(),
	}
}

// Apply implements Projection. It gathers the batch into set-based
// statements, so a rebuild runs at tens of thousands of events a second.
func (Projection) Apply(ctx context.Context, tx pgx.Tx, events []projections.Event) error {
	var acc struct {
		ids       []uuid.UUID
		emails    []string
		plans     []string
		at        []time.Time
		customers []*string
		changedAt []*time.Time
		pos       []int64
	}
	accInBatch := map[uuid.UUID]int{}
	// plan changes of accounts created in earlier batches, last one wins
	type planChange struct {
		plan     string
		customer *string
		at       time.Time
		pos      int64
	}
	planChanges := map[uuid.UUID]planChange{}
	var planOrder []uuid.UUID
	var sess struct {
		ids, accounts    []uuid.UUID
		services, hashes []string
		started, expires []time.Time
		ended            []*time.Time
		pos              []int64
	}
	sessInBatch := map[uuid.UUID]int{}
	var ends struct {
		ids []uuid.UUID
		at  []time.Time
		pos []int64
	}
	var keys struct {
		ids, accounts             []uuid.UUID
		services, prefixes, hints []string
		hashes, names             []string
		at                        []time.Time
		revoked                   []*time.Time
		pos                       []int64
	}
	inBatch := map[uuid.UUID]int{} // key id -> index in keys, to fold a revocation into its insert
	var rev struct {
		ids []uuid.UUID
		at  []time.Time
		pos []int64
	}
	for _, e := range events {
		switch p := e.Payload.(type) {
		case *account.AccountCreated:
			v := *p
			accInBatch[v.AccountID] = len(acc.ids)
			acc.ids, acc.emails, acc.plans = append(acc.ids, v.AccountID), append(acc.emails, v.Email), append(acc.plans, string(v.Plan))
			acc.at, acc.pos = append(acc.at, v.CreatedAt), append(acc.pos, int64(e.Position))
			acc.customers, acc.changedAt = append(acc.customers, nil), append(acc.changedAt, nil)
		case *account.PlanChanged:
			v := *p
			var customer *string
			if v.StripeCustomerID != "" {
				c := v.StripeCustomerID
				customer = &c
			}
			if i, ok := accInBatch[v.AccountID]; ok {
				at := v.ChangedAt
				acc.plans[i], acc.changedAt[i], acc.pos[i] = string(v.To), &at, int64(e.Position)
				if customer != nil {
					acc.customers[i] = customer
				}
				continue
			}
			prev, seen := planChanges[v.AccountID]
			if !seen {
				planOrder = append(planOrder, v.AccountID)
			}
			if customer == nil {
				customer = prev.customer
			}
			planChanges[v.AccountID] = planChange{plan: string(v.To), customer: customer, at: v.ChangedAt, pos: int64(e.Position)}
		case *signin.SessionStarted:
			v := *p
			sessInBatch[v.SessionID] = len(sess.ids)
			sess.ids, sess.accounts, sess.services, sess.hashes = append(sess.ids, v.SessionID), append(sess.accounts, v.AccountID), append(sess.services, v.Service), append(sess.hashes, v.TokenHash)
			sess.started, sess.expires, sess.ended, sess.pos = append(sess.started, v.StartedAt), append(sess.expires, v.ExpiresAt), append(sess.ended, nil), append(sess.pos, int64(e.Position))
		case *signin.SessionEnded:
			v := *p
			if i, ok := sessInBatch[v.SessionID]; ok {
				at := v.EndedAt
				sess.ended[i], sess.pos[i] = &at, int64(e.Position)
				continue
			}
			ends.ids, ends.at, ends.pos = append(ends.ids, v.SessionID), append(ends.at, v.EndedAt), append(ends.pos, int64(e.Position))
		case *account.KeyIssued:
			v := *p
			inBatch[v.KeyID] = len(keys.ids)
			keys.ids, keys.accounts = append(keys.ids, v.KeyID), append(keys.accounts, v.AccountID)
			keys.services, keys.prefixes, keys.hints = append(keys.services, string(v.Service)), append(keys.prefixes, v.Prefix), append(keys.hints, v.Hint)
			keys.hashes, keys.names = append(keys.hashes, v.SecretHash), append(keys.names, v.Name)
			keys.at, keys.revoked, keys.pos = append(keys.at, v.IssuedAt), append(keys.revoked, nil), append(keys.pos, int64(e.Position))
		case *account.KeyRevoked:
			v := *p
			if i, ok := inBatch[v.KeyID]; ok {
				if keys.revoked[i] == nil {
					at := v.RevokedAt
					keys.revoked[i], keys.pos[i] = &at, int64(e.Position)
				}
				continue
			}
			rev.ids, rev.at, rev.pos = append(rev.ids, v.KeyID), append(rev.at, v.RevokedAt), append(rev.pos, int64(e.Position))
		}
	}
	// New rows go in with COPY: the runner applies each event exactly once,
	// so there is nothing to conflict with.
	if len(acc.ids) > 0 {
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"accounts"}, []string{"account_id", "email", "plan", "created_at", "stripe_customer_id", "plan_changed_at", "position"},
			pgx.CopyFromSlice(len(acc.ids), func(i int) ([]any, error) {
				return []any{acc.ids[i], acc.emails[i], acc.plans[i], acc.at[i], acc.customers[i], acc.changedAt[i], acc.pos[i]}, nil
			})); err != nil {
			return fmt.Errorf("inserting accounts: %w", err)
		}
	}
	if len(planOrder) > 0 {
		ids := make([]uuid.UUID, len(planOrder))
		plans, customers := make([]string, len(planOrder)), make([]*string, len(planOrder))
		at, pos := make([]time.Time, len(planOrder)), make([]int64, len(planOrder))
		for i, id := range planOrder {
			c := planChanges[id]
			ids[i], plans[i], customers[i], at[i], pos[i] = id, c.plan, c.customer, c.at, c.pos
		}
		if _, err := tx.Exec(ctx, `UPDATE accounts a SET plan = c.plan, stripe_customer_id = coalesce(c.customer, a.stripe_customer_id),
				plan_changed_at = c.at, position = c.pos
			FROM unnest($1::uuid[], $2::text[], $3::text[], $4::timestamptz[], $5::bigint[]) AS c(id, plan, customer, at, pos)
			WHERE a.account_id = c.id`, ids, plans, customers, at, pos); err != nil {
			return fmt.Errorf("changing plans: %w", err)
		}
	}
	if len(sess.ids) > 0 {
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"sessions"},
			[]string{"session_id", "account_id", "service", "token_hash", "started_at", "expires_at", "ended_at", "position"},
			pgx.CopyFromSlice(len(sess.ids), func(i int) ([]any, error) {
				return []any{sess.ids[i], sess.accounts[i], sess.services[i], sess.hashes[i], sess.started[i], sess.expires[i], sess.ended[i], sess.pos[i]}, nil
			})); err != nil {
			return fmt.Errorf("inserting sessions: %w", err)
		}
	}
	if len(ends.ids) > 0 {
		if _, err := tx.Exec(ctx, `UPDATE sessions s SET ended_at = e.at, position = e.pos
			FROM unnest($1::uuid[], $2::timestamptz[], $3::bigint[]) AS e(id, at, pos)
			WHERE s.session_id = e.id AND s.ended_at IS NULL`, ends.ids, ends.at, ends.pos); err != nil {
			return fmt.Errorf("ending sessions: %w", err)
		}
	}
	if len(keys.ids) > 0 {
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"api_keys"},
			[]string{"key_id", "account_id", "service", "prefix", "hint", "secret_hash", "name", "issued_at", "revoked_at", "position"},
			pgx.CopyFromSlice(len(keys.ids), func(i int) ([]any, error) {
				return []any{keys.ids[i], keys.accounts[i], keys.services[i], keys.prefixes[i], keys.hints[i], keys.hashes[i],
					keys.names[i], keys.at[i], keys.revoked[i], keys.pos[i]}, nil
			})); err != nil {
			return fmt.Errorf("inserting keys: %w", err)
		}
	}
	if len(rev.ids) > 0 {
		if _, err := tx.Exec(ctx, `UPDATE api_keys k SET revoked_at = r.at, position = r.pos
			FROM unnest($1::uuid[], $2::timestamptz[], $3::bigint[]) AS r(id, at, pos)
			WHERE k.key_id = r.id AND k.revoked_at IS NULL`, rev.ids, rev.at, rev.pos); err != nil {
			return fmt.Errorf("revoking keys: %w", err)
		}
	}
	if len(rev.ids) > 0 || len(planChanges) > 0 {
		// Delivered on commit: every process caching principals drops them.
		if _, err := tx.Exec(ctx, `SELECT pg_notify($1, '')`, Channel); err != nil {
			return fmt.Errorf("announcing identity changes: %w", err)
		}
	}
	return nil
}

// FailClosedChannel makes identity fail closed (FailsClosed): it never
// parks an event, and while it cannot advance, Authenticate and
// SessionByToken refuse with 503 instead of trusting a read model that may
// miss a revocation or a plan change.
func (Projection) FailClosedChannel() string { return Channel }

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
}

// KeyInfo is an API key as listed to its owner or an operator: never the
// secret, never its hash.
type KeyInfo struct {
	ID        uuid.UUID       `json:"id"`
	AccountID uuid.UUID       `json:"account_id"`
	Service   account.Service `json:"service"`
	Prefix    string          `json:"prefix"`
	Hint      string          `json:"hint"`
	Name      string          `json:"name"`
	CreatedAt time.Time       `json:"created_at"`
	RevokedAt *time.Time      `json:"revoked_at"`
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
		return p, nil
	}
	var found bool
	blocked, err := q.lookup(ctx, `
		SELECT k.key_id, k.account_id, a.email, a.plan, k.service, k.prefix, k.hint, k.name, k.issued_at
		FROM rm_identity.api_keys k JOIN rm_identity.accounts a USING (account_id)
		WHERE k.secret_hash = $1 AND k.revoked_at IS NULL`, []any{hash}, func(row pgx.Row) error {
		err := row.Scan(&p.KeyID, &p.AccountID, &p.Email, &p.Plan, &p.Service, &p.Prefix, &p.Hint, &p.Name, &p.IssuedAt)
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
	return p, nil
}

// lookup runs a credential query (one row or none, scanned by scan) and,
// in the same round trip, asks whether identity is blocked (fail closed).
// No row is not an error.
func (q *Queries) lookup(ctx context.Context, sql string, args []any, scan func(pgx.Row) error) (blocked bool, err error) {
	b := &pgx.Batch{}
	b.Queue(`SELECT ` + identityBlocked).QueryRow(func(row pgx.Row) error { return row.Scan(&blocked) })
	b.Queue(sql, args...).QueryRow(func(row pgx.Row) error {
		if err := scan(row); err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		return nil
	})
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
	rows, err := q.pool.Query(ctx, `SELECT key_id, account_id, service, prefix, hint, name, issued_at, revoked_at FROM rm_identity.api_keys `+where, arg)
	if err != nil {
		return nil, fmt.Errorf("listing keys: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (KeyInfo, error) {
		var k KeyInfo
		err := r.Scan(&k.ID, &k.AccountID, &k.Service, &k.Prefix, &k.Hint, &k.Name, &k.CreatedAt, &k.RevokedAt)
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
