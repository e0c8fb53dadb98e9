package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/domain/date"
	"github.com/arr-dev/arr/projections/identity"
)

// limitFlags are the flags of a gateway key's limits (arr keys mint, arr
// keys limits).
type limitFlags struct {
	budget    float64
	period    string
	rpm, tpm  int64
	models    string
	expiresAt string
}

func (f *limitFlags) register(c *cobra.Command) {
	c.Flags().Float64Var(&f.budget, "max-budget-usd", 0, "the key's budget per period in US dollars (0: none)")
	c.Flags().StringVar(&f.period, "budget-period", "", "day, week, month (UTC calendar periods) or total (default month)")
	c.Flags().Int64Var(&f.rpm, "rpm", 0, "requests per minute (0: none)")
	c.Flags().Int64Var(&f.tpm, "tpm", 0, "tokens per minute (0: none)")
	c.Flags().StringVar(&f.models, "models", "", "comma-separated tiers and model ids the key may use (empty: all)")
	c.Flags().StringVar(&f.expiresAt, "expires-at", "", "when the key stops working, RFC 3339 (empty: never)")
}

// change is the limits the flags that were given set; the others keep.
func (f *limitFlags) change(c *cobra.Command) (account.LimitsChange, error) {
	var ch account.LimitsChange
	set := c.Flags().Changed
	if set("max-budget-usd") {
		m, err := account.ParseUSD("max_budget_usd", f.budget)
		if err != nil {
			return ch, err
		}
		ch.MaxBudget = &m
	}
	if set("budget-period") {
		p := account.Period(f.period)
		ch.Period = &p
	}
	if set("rpm") {
		ch.RPM = &f.rpm
	}
	if set("tpm") {
		ch.TPM = &f.tpm
	}
	if set("models") {
		ms := []string{}
		for _, m := range strings.Split(f.models, ",") {
			if m = strings.TrimSpace(m); m != "" {
				ms = append(ms, m)
			}
		}
		ch.Models = &ms
	}
	if set("expires-at") {
		var at *time.Time
		if f.expiresAt != "" {
			t, err := date.Instant("expires_at", f.expiresAt)
			if err != nil {
				return ch, err
			}
			at = &t
		}
		ch.ExpiresAt = &at
	}
	return ch, nil
}

// knownModel says whether a name is a tier or a model id of the catalog
// the gateway would load.
func knownModel(cfg Config) (func(string) bool, error) {
	cat, err := loadCatalog(cfg)
	if err != nil {
		return nil, err
	}
	return cat.Knows, nil
}

// keyLimitsCmd is `arr keys limits`.
func (a *cli) keyLimitsCmd() *cobra.Command {
	var id string
	var flags limitFlags
	var asJSON bool
	c := &cobra.Command{
		Use:   "limits --id ID [--max-budget-usd X] [--budget-period day|week|month|total] [--rpm N] [--tpm N] [--models a,b] [--expires-at RFC3339]",
		Short: "Change a gateway key's limits: the flags given change (0 or empty clears), the others stay",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			change, err := flags.change(cmd)
			if err != nil {
				return err
			}
			s, k, err := a.openWithKey(cmd, id)
			if err != nil {
				return err
			}
			defer s.Close()
			keyID := k.ID
			known, err := knownModel(s.cfg)
			if err != nil {
				return err
			}
			pos, err := s.app.Commands.SetKeyLimits.Handle(cmd.Context(), commands.SetKeyLimits{AccountID: k.AccountID, KeyID: keyID,
				Change: change, KnownModel: known, Metadata: cliMetadata(cmd)})
			if err != nil {
				return err
			}
			return a.printKeyLimits(cmd, s, keyID, pos, asJSON)
		},
	}
	c.Flags().StringVar(&id, "id", "", "key id (required)")
	flags.register(c)
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	_ = c.MarkFlagRequired("id")
	return c
}

// printKeyLimits waits for the read model to show the change at pos and
// prints the key's limits.
func (a *cli) printKeyLimits(cmd *cobra.Command, s *system, keyID uuid.UUID, pos uint64, asJSON bool) error {
	if pos > 0 {
		if err := s.waitFor(cmd.Context(), identity.Name, pos); err != nil {
			return fmt.Errorf("the limits of key %s were changed but the read model did not catch up: %w", keyID, err)
		}
	}
	k, err := s.app.Queries.Identities.Key(cmd.Context(), keyID)
	if err != nil {
		return err
	}
	if asJSON {
		return printJSON(cmd.OutOrStdout(), map[string]any{"id": keyID, "limits": k.Limits, "position": pos})
	}
	fmt.Fprintf(cmd.OutOrStdout(), "key %s limits: %s\n", keyID, k.Limits.Describe())
	return nil
}

// accountBudgetCmd is `arr accounts budget`.
func (a *cli) accountBudgetCmd() *cobra.Command {
	var email, period string
	var usd float64
	var asJSON bool
	c := &cobra.Command{
		Use:   "budget --email E --max-budget-usd X --budget-period day|week|month|total",
		Short: "Set the budget an account's gateway keys share (0 clears it)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := account.NormalizeEmail(email)
			if err != nil {
				return err
			}
			m, err := account.ParseUSD("max_budget_usd", usd)
			if err != nil {
				return err
			}
			s, err := a.open(cmd, openOptions{setup: true})
			if err != nil {
				return err
			}
			defer s.Close()
			b := account.Budget{Max: m, Period: account.Period(period)}
			pos, err := s.app.Commands.SetAccountBudget.Handle(cmd.Context(), commands.SetAccountBudget{AccountID: account.IDForEmail(e),
				Budget: b, Metadata: cliMetadata(cmd)})
			if err != nil {
				return err
			}
			return printBudget(cmd.Context(), cmd, s, e, b, pos, asJSON)
		},
	}
	c.Flags().StringVar(&email, "email", "", "account e-mail address (required)")
	c.Flags().Float64Var(&usd, "max-budget-usd", 0, "the budget per period in US dollars (0: none) (required)")
	c.Flags().StringVar(&period, "budget-period", "month", "day, week, month (UTC calendar periods) or total")
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	_ = c.MarkFlagRequired("email")
	_ = c.MarkFlagRequired("max-budget-usd")
	return c
}

func printBudget(ctx context.Context, cmd *cobra.Command, s *system, email string, b account.Budget, pos uint64, asJSON bool) error {
	if pos > 0 {
		if err := s.waitFor(ctx, identity.Name, pos); err != nil {
			return fmt.Errorf("the budget was set but the read model did not catch up: %w", err)
		}
	}
	if asJSON {
		return printJSON(cmd.OutOrStdout(), map[string]any{"email": email, "max_budget_usd": float64(b.Max) / 1e6, "budget_period": b.Period, "position": pos})
	}
	if b.Max == 0 {
		fmt.Fprintf(cmd.OutOrStdout(), "%s has no shared budget\n", email)
		return nil
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s: the account's keys share $%s per %s\n", email, b.Max.USD(), b.Period)
	return nil
}

// listedKey is a key as `arr keys list` shows it: its limits and the
// spend of its budget's current period.
type listedKey struct {
	identity.KeyInfo
	Limits keyLimitsJSON `json:"limits"`
	Spend  *spentJSON    `json:"spend"`
}

// keyLimitsJSON are a key's limits with the API's names; null for none.
type keyLimitsJSON struct {
	MaxBudgetUSD *float64       `json:"max_budget_usd"`
	BudgetPeriod account.Period `json:"budget_period,omitempty"`
	RPM          *int64         `json:"rpm_limit"`
	TPM          *int64         `json:"tpm_limit"`
	Models       []string       `json:"models"`
	ExpiresAt    *time.Time     `json:"expires_at"`
}

type spentJSON struct {
	Period      account.Period `json:"budget_period"`
	PeriodStart time.Time      `json:"period_start"`
	PeriodEnd   time.Time      `json:"period_end"`
	SpentUSD    float64        `json:"spent_usd"`
	ReservedUSD float64        `json:"reserved_usd"`
	Used        int64          `json:"-"`
}

func limitsJSON(l account.KeyLimits) keyLimitsJSON {
	out := keyLimitsJSON{BudgetPeriod: l.Period, Models: l.Models, ExpiresAt: l.ExpiresAt}
	if l.MaxBudget > 0 {
		v := float64(l.MaxBudget) / 1e6
		out.MaxBudgetUSD = &v
	}
	if l.RPM > 0 {
		out.RPM = &l.RPM
	}
	if l.TPM > 0 {
		out.TPM = &l.TPM
	}
	return out
}

// withSpend adds each key's limits and spend.
func withSpend(ctx context.Context, s *system, keys []identity.KeyInfo) ([]listedKey, error) {
	out := []listedKey{}
	for _, k := range keys {
		lk := listedKey{KeyInfo: k, Limits: limitsJSON(k.Limits)}
		if k.Limits.MaxBudget > 0 && s.app.Queries.Spend != nil {
			sp, err := s.app.Queries.Spend.KeySpent(ctx, k.ID, k.Limits.Period)
			if err != nil {
				return nil, err
			}
			lk.Spend = &spentJSON{Period: sp.Period, PeriodStart: sp.Start, PeriodEnd: sp.End, SpentUSD: float64(sp.Used) / 1e6,
				ReservedUSD: float64(sp.Reserved) / 1e6, Used: int64(sp.Used)}
		}
		out = append(out, lk)
	}
	return out, nil
}
