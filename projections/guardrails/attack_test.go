package guardrails_test

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/migrations/migratetest"
	"github.com/arr-dev/arr/projections/guardrails"
)

// TestAttackEffectiveWhileFaulted: the read model is declared to fail
// closed ("while it cannot advance its readers refuse rather than answer
// from it", Spec.FailClosedChannel), but Effective never looks at the
// projection's fault: while a GuardrailsSet (a stricter policy, or a
// key's own) cannot be applied, every completion runs under the policy
// from before it, or under none, instead of being refused as identity's
// readers are (identity_unavailable).
func TestAttackEffectiveWhileFaulted(t *testing.T) {
	pool, _ := migratetest.NewPool(t)
	ctx := context.Background()
	account, key := uuid.New(), uuid.New()
	for _, s := range []string{
		`CREATE SCHEMA rm_guardrails`,
		`CREATE TABLE rm_guardrails.guardrails (account_id uuid NOT NULL, key_id uuid NOT NULL, policy jsonb NOT NULL,
			set_at timestamptz NOT NULL, position bigint NOT NULL, PRIMARY KEY (account_id, key_id))`,
		`INSERT INTO rm_guardrails.guardrails VALUES ('` + account.String() + `', '00000000-0000-0000-0000-000000000000',
			'{"max_prompt_bytes":100000}', now(), 4)`,
		`INSERT INTO projection_checkpoints (name, position) VALUES ('guardrails', 5)`,
		// The GuardrailsSet at 6 (say, the account's PII rules) failed to apply.
		`INSERT INTO projection_faults (projection, position, error) VALUES ('guardrails', 5, 'setting guardrails: cannot apply')`,
	} {
		if _, err := pool.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	e, err := guardrails.NewQueries(pool).Effective(ctx, account, key)
	if err == nil {
		t.Fatalf("with the read model stuck behind a GuardrailsSet it cannot apply, Effective answered %+v (scope %s) from it", e.Policy, e.Scope)
	}
}
