package main_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/projections"
	"github.com/arr-dev/arr/projections/builtin"
)

// TestPlansKeysSessionsAndUsageRebuildIdentically: accounts with plan
// changes, keys, sessions (some signed out) and usage, applied live batch by
// batch, equal a fresh `arr projections rebuild all`.
func TestPlansKeysSessionsAndUsageRebuildIdentically(t *testing.T) {
	e := newEnv(t)
	e.createAccount("seed@example.com", "free") // sets the read models up
	pool, st := openStore(t, e.dbURL)
	cmds, err := commands.New(commands.Config{Store: st, Clock: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	day := time.Now().UTC().Format("2006-01-02")
	for i := 0; i < 20; i++ {
		svc := account.Services()[i%3]
		link, err := cmds.RequestSignIn.Handle(ctx, commands.RequestSignIn{Email: fmt.Sprintf("r%d@example.com", i), Service: svc})
		if err != nil {
			t.Fatal(err)
		}
		in, err := cmds.CompleteSignIn.Handle(ctx, commands.CompleteSignIn{LinkID: link.LinkID.String(), Token: link.Token})
		if err != nil {
			t.Fatal(err)
		}
		var limits account.KeyLimits
		if svc == account.Gateway {
			limits = account.KeyLimits{TPM: int64(100*i + 1), MaxBudget: account.MicroUSD(1000 * i), Period: account.PeriodWeek}
		}
		k, err := cmds.IssueKey.Handle(ctx, commands.IssueKey{AccountID: in.AccountID, Service: svc, Name: "k", Limits: limits})
		if err != nil {
			t.Fatal(err)
		}
		if svc == account.Gateway {
			limitsAndBudgets(t, cmds, in.AccountID, k.KeyID, i)
		}
		if _, err := cmds.CountCalls.Handle(ctx, commands.CountCalls{AccountID: in.AccountID, Day: day,
			Keys: []commands.KeyCalls{{EventID: uuid.New(), KeyID: k.KeyID, Service: svc, Calls: int64(i + 1)}}}); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			if _, err := cmds.ChangePlan.Handle(ctx, commands.ChangePlan{AccountID: in.AccountID,
				Change: account.PlanChange{To: account.Pro, Source: "stripe", Reference: fmt.Sprintf("evt_%d", i), StripeCustomerID: fmt.Sprintf("cus_%d", i)}}); err != nil {
				t.Fatal(err)
			}
		}
		if i%3 == 0 {
			if _, err := cmds.EndSession.Handle(ctx, commands.EndSession{SessionID: in.SessionID}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Live: small batches, as a running projection process applies them.
	runner, err := projections.NewRunner(pool, st, projections.Config{BatchSize: 7}, builtin.All()...)
	if err != nil {
		t.Fatal(err)
	}
	if err := runner.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	head, _ := st.Head(ctx)
	for _, p := range runner.Projections() {
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		if err := runner.WaitFor(wctx, p.Name, head); err != nil {
			t.Fatal(err)
		}
		cancel()
	}
	live := snapshot(t, pool)
	for _, table := range []string{"rm_identity.sessions", "rm_usage.usage_daily"} {
		if live[table] == "" {
			t.Fatalf("%s is empty after the traffic", table)
		}
	}
	var pro int
	_ = pool.QueryRow(ctx, `SELECT count(*) FROM rm_identity.accounts WHERE plan = 'pro' AND stripe_customer_id IS NOT NULL`).Scan(&pro)
	if pro != 10 {
		t.Fatalf("%d accounts on Pro with a Stripe customer, want 10", pro)
	}
	var limited, budgets int
	_ = pool.QueryRow(ctx, `SELECT count(*) FROM rm_identity.api_keys WHERE rpm_limit > 0 AND tpm_limit > 0 AND max_budget_micro_usd > 0
		AND models = '{nano,small}' AND expires_at IS NOT NULL`).Scan(&limited)
	_ = pool.QueryRow(ctx, `SELECT count(*) FROM rm_identity.accounts WHERE budget_micro_usd > 0 AND budget_period = 'month'`).Scan(&budgets)
	if limited != 7 || budgets != 7 {
		t.Fatalf("%d gateway keys with their limits and %d accounts with a budget, want 7 and 7", limited, budgets)
	}
	e.mustArr(nil, "projections", "rebuild", "all")
	rebuilt := snapshot(t, pool)
	for table, want := range live {
		if rebuilt[table] != want {
			t.Errorf("%s differs after a rebuild", table)
		}
	}
}

// limitsAndBudgets changes a gateway key's limits and its account's
// budget, some twice, so batches fold them into rows of the same batch
// and change rows of earlier ones.
func limitsAndBudgets(t *testing.T, cmds commands.Commands, acc, key uuid.UUID, i int) {
	t.Helper()
	ctx := context.Background()
	rpm, models := int64(i+1), []string{"nano", "small"}
	at := time.Date(2030, 1, i+1, 0, 0, 0, 0, time.UTC)
	expires := &at
	if _, err := cmds.SetKeyLimits.Handle(ctx, commands.SetKeyLimits{AccountID: acc, KeyID: key,
		Change: account.LimitsChange{RPM: &rpm, Models: &models, ExpiresAt: &expires}}); err != nil {
		t.Fatal(err)
	}
	for n := 0; n <= i%2; n++ {
		if _, err := cmds.SetAccountBudget.Handle(ctx, commands.SetAccountBudget{AccountID: acc,
			Budget: account.Budget{Max: account.MicroUSD(5000*i + n + 1), Period: account.PeriodMonth}}); err != nil {
			t.Fatal(err)
		}
	}
}
