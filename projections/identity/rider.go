package identity

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/arr-dev/arr/domain/account"
)

// Rider is work a caller adds to Authenticate's look-up of a key, in the
// look-up's round trip: the gateway counts a request against its plan's
// quota there (readapi/ratelimit), so that the key and its quota are
// decided in one round trip. A rider rides only when Authenticate looks
// the key up, never on a principal it answers from memory.
type Rider interface {
	// Ride queues the rider's statements on b, after the look-up's; the
	// key is the one whose secret hashes to secretHash, presented to
	// service svc at now (see EligibleKeySQL).
	Ride(b *pgx.Batch, secretHash string, svc account.Service, now time.Time)
}

type riderKey struct{}

// WithRider returns a context whose Authenticate look-up carries r.
func WithRider(ctx context.Context, r Rider) context.Context {
	return context.WithValue(ctx, riderKey{}, r)
}

func riderOf(ctx context.Context) Rider {
	r, _ := ctx.Value(riderKey{}).(Rider)
	return r
}

// EligibleKeySQL selects the account_id and plan of the key a rider may
// count a request for: the key whose secret hashes to $1, of service $2,
// not revoked, not expired at $3, while identity is not blocked (exactly
// the keys Authenticate admits), and whose requests reserve nothing of
// their own (no budget, no requests or tokens per minute, no account
// budget: those are counted with their reservation, commands/spend). No
// row: count nothing.
const EligibleKeySQL = `SELECT k.account_id, a.plan FROM rm_identity.api_keys k JOIN rm_identity.accounts a USING (account_id)
	WHERE k.secret_hash = $1 AND k.revoked_at IS NULL AND k.service = $2 AND (k.expires_at IS NULL OR k.expires_at > $3)
	AND k.max_budget_micro_usd = 0 AND k.rpm_limit = 0 AND k.tpm_limit = 0 AND coalesce(a.budget_micro_usd, 0) = 0
	AND NOT ` + identityBlocked
