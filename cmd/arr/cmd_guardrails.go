package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/commands/complete"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/domain/guardrail"
	"github.com/arr-dev/arr/projections/guardrails"
)

// guardrailsCmd is `arr guardrails`: set, show and clear an account's or a
// gateway key's guardrails.
func (a *cli) guardrailsCmd() *cobra.Command {
	c := &cobra.Command{Use: "guardrails", Short: "An account's or a gateway key's guardrails (PII, deny patterns, prompt cap, webhook)"}
	c.AddCommand(a.guardrailsSetCmd(false), a.guardrailsSetCmd(true), a.guardrailsShowCmd())
	return c
}

// guardrailScope is the --email and --key flags: the account, or one of
// its gateway keys.
type guardrailScope struct {
	email, key string
}

func (f *guardrailScope) register(c *cobra.Command) {
	c.Flags().StringVar(&f.email, "email", "", "account e-mail address (required)")
	c.Flags().StringVar(&f.key, "key", "", "a gateway key id of the account: its own guardrails (default: the account's)")
	_ = c.MarkFlagRequired("email")
}

func (f *guardrailScope) parse() (uuid.UUID, uuid.UUID, error) {
	e, err := account.NormalizeEmail(f.email)
	if err != nil {
		return uuid.Nil, uuid.Nil, err
	}
	keyID := uuid.Nil
	if f.key != "" {
		if keyID, err = uuid.Parse(f.key); err != nil {
			return uuid.Nil, uuid.Nil, domain.Invalid("invalid_key_id", "key", "--key must be a key id (a UUID); got %q", f.key)
		}
	}
	return account.IDForEmail(e), keyID, nil
}

// readPolicy reads --policy: the JSON, or @FILE.
func readPolicy(arg string) (guardrail.Policy, error) {
	raw := []byte(arg)
	if name, ok := strings.CutPrefix(arg, "@"); ok {
		b, err := os.ReadFile(name)
		if err != nil {
			return guardrail.Policy{}, fmt.Errorf("reading the policy: %w", err)
		}
		raw = b
	}
	return guardrail.ParsePolicy(raw)
}

// guardrailsSetCmd is `arr guardrails set` (or, with clear, `arr
// guardrails clear`).
func (a *cli) guardrailsSetCmd(clear bool) *cobra.Command {
	var scope guardrailScope
	var policy string
	var asJSON bool
	c := &cobra.Command{
		Use:   "set --email E [--key ID] --policy JSON|@FILE [--json]",
		Short: "Set the guardrails of an account or of one of its gateway keys (the whole policy; a key's replaces the account's for it)",
		Args:  cobra.NoArgs,
	}
	if clear {
		c.Use, c.Short = "clear --email E [--key ID]", "Clear the guardrails of an account, or a key's own (it follows the account's again)"
	}
	c.RunE = func(cmd *cobra.Command, _ []string) error {
		accountID, keyID, err := scope.parse()
		if err != nil {
			return err
		}
		var pol *guardrail.Policy
		if !clear {
			p, err := readPolicy(policy)
			if err != nil {
				return err
			}
			pol = &p
		}
		s, err := a.open(cmd, openOptions{setup: true})
		if err != nil {
			return err
		}
		defer s.Close()
		pos, err := s.app.Commands.SetGuardrails.Handle(cmd.Context(), commands.SetGuardrails{AccountID: accountID, KeyID: keyID,
			Policy: pol, Metadata: cliMetadata(cmd)})
		if err != nil {
			return err
		}
		if err := s.waitFor(cmd.Context(), guardrails.Name, pos); err != nil {
			return fmt.Errorf("the guardrails were set but the read model did not catch up: %w", err)
		}
		return printGuardrails(cmd, s, accountID, keyID, pos, asJSON, false)
	}
	scope.register(c)
	if !clear {
		c.Flags().StringVar(&policy, "policy", "", "the policy as JSON (as PUT /v1/me/guardrails takes it), or @FILE (required)")
		_ = c.MarkFlagRequired("policy")
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}

// guardrailsShowCmd is `arr guardrails show`.
func (a *cli) guardrailsShowCmd() *cobra.Command {
	var scope guardrailScope
	var asJSON, secret bool
	c := &cobra.Command{
		Use:   "show --email E [--key ID] [--secret] [--json]",
		Short: "Show the guardrails that apply to an account or to one of its gateway keys",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			accountID, keyID, err := scope.parse()
			if err != nil {
				return err
			}
			s, err := a.open(cmd, openOptions{catchUp: []string{guardrails.Name}, auditKey: secret})
			if err != nil {
				return err
			}
			defer s.Close()
			return printGuardrails(cmd, s, accountID, keyID, 0, asJSON, secret)
		},
	}
	scope.register(c)
	c.Flags().BoolVar(&secret, "secret", false, "with the webhook guardrail's signing secret (loads the gateway's audit hash key)")
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}

// shownGuardrails is what `arr guardrails` prints.
type shownGuardrails struct {
	AccountID uuid.UUID         `json:"account_id"`
	KeyID     *uuid.UUID        `json:"key_id,omitempty"`
	Scope     guardrails.Scope  `json:"scope"`
	Policy    *guardrail.Policy `json:"guardrails"`
	Secret    string            `json:"webhook_secret,omitempty"`
	Position  uint64            `json:"position,omitempty"`
}

func printGuardrails(cmd *cobra.Command, s *system, accountID, keyID uuid.UUID, pos uint64, asJSON, secret bool) error {
	out := shownGuardrails{AccountID: accountID, Scope: guardrails.ScopeNone, Position: pos}
	if keyID != uuid.Nil {
		out.KeyID = &keyID
		e, err := s.app.Queries.Guardrails.Effective(cmd.Context(), accountID, keyID)
		if err != nil {
			return err
		}
		if out.Scope = e.Scope; e.Scope != guardrails.ScopeNone {
			out.Policy = &e.Policy
		}
	} else {
		st, err := s.app.Queries.Guardrails.Account(cmd.Context(), accountID)
		if err != nil {
			return err
		}
		if st.Account != nil {
			out.Scope, out.Policy = guardrails.ScopeAccount, st.Account
		}
	}
	if secret && out.Policy != nil && out.Policy.Webhook != nil {
		out.Secret = complete.WebhookSecret(s.auditKey, accountID, out.Policy.Webhook.SecretNonce)
	}
	if asJSON {
		return printJSON(cmd.OutOrStdout(), out)
	}
	if out.Policy == nil {
		fmt.Fprintf(cmd.OutOrStdout(), "no guardrails\n")
		return nil
	}
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "guardrails (%s's):\n", out.Scope)
	for _, r := range out.Policy.PII {
		fmt.Fprintf(w, "  pii %s: %s on %s\n", r.Type, r.Action, r.On)
	}
	for _, d := range out.Policy.Deny {
		fmt.Fprintf(w, "  deny %q: %s on %s\n", d.Pattern, d.Action, d.On)
	}
	if out.Policy.MaxPromptBytes > 0 {
		fmt.Fprintf(w, "  max prompt bytes: %d\n", out.Policy.MaxPromptBytes)
	}
	if h := out.Policy.Webhook; h != nil {
		fmt.Fprintf(w, "  webhook %s: fail %s, timeout %d ms\n", h.URL, h.Fail, h.TimeoutMS)
		if out.Secret != "" {
			fmt.Fprintf(w, "  webhook secret: %s\n", out.Secret)
		}
	}
	return nil
}
