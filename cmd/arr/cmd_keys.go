package main

import (
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/arr-dev/arr/projections/identity"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/account"
)

func (a *cli) keysCmd() *cobra.Command {
	c := &cobra.Command{Use: "keys", Short: "Mint, revoke and list API keys"}
	c.AddCommand(a.mintKeyCmd(), a.revokeKeyCmd(), a.listKeysCmd(), a.keyLimitsCmd())
	return c
}

// mintKeyCmd is `arr keys mint`.
func (a *cli) mintKeyCmd() *cobra.Command {
	var email, service, name string
	var mintJSON, createAccount bool
	var flags limitFlags
	mint := &cobra.Command{
		Use:   "mint --email E --service answer|gateway|records [--create-account] [--name N] [--max-budget-usd X] [--budget-period day|week|month|total] [--rpm N] [--tpm N] [--models a,b] [--expires-at RFC3339]",
		Short: "Mint an API key; the secret is printed once and never stored",
		Long: "Mint an API key. The secret alone goes to standard output (KEY=$(arr keys mint ...) keeps it),\n" +
			"what it is to standard error; it is shown once and never stored. The account must exist\n" +
			"(arr accounts create), or give --create-account to create it on the free plan.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			svc, err := account.ParseService(service)
			if err != nil {
				return err
			}
			e, err := account.NormalizeEmail(email)
			if err != nil {
				return err
			}
			change, err := flags.change(cmd)
			if err != nil {
				return err
			}
			s, err := a.open(cmd, openOptions{setup: true})
			if err != nil {
				return err
			}
			defer s.Close()
			known, err := knownModel(s.cfg)
			if err != nil {
				return err
			}
			issue := commands.IssueKey{AccountID: account.IDForEmail(e), Service: svc, Name: name,
				Limits: change.Apply(account.KeyLimits{}), KnownModel: known, Metadata: cliMetadata(cmd)}
			k, err := s.app.Commands.IssueKey.Handle(cmd.Context(), issue)
			var created *commands.AccountCreatedResult
			if createAccount && isCode(err, "account_not_found") {
				if created, err = ensureAccount(cmd, s, e); err != nil {
					return err
				}
				k, err = s.app.Commands.IssueKey.Handle(cmd.Context(), issue)
			}
			if err != nil {
				return err
			}
			// Read-your-writes: the key authenticates as soon as we return.
			if err := s.waitFor(cmd.Context(), identity.Name, k.Position); err != nil {
				return fmt.Errorf("key %s was minted but the read model did not catch up: %w", k.KeyID, err)
			}
			out := map[string]any{
				"id": k.KeyID, "secret": k.Secret, "prefix": k.Prefix, "hint": k.Hint, "service": k.Service,
				"name": k.Name, "account_id": k.AccountID, "created_at": k.CreatedAt, "position": k.Position, "limits": k.Limits,
			}
			if created != nil {
				out["account_created"] = true
			}
			if mintJSON {
				return printJSON(cmd.OutOrStdout(), out)
			}
			if created != nil {
				fmt.Fprintf(cmd.ErrOrStderr(), "account %s created for %s on the %s plan\n", created.AccountID, created.Email, created.Plan)
			}
			fmt.Fprintln(cmd.OutOrStdout(), k.Secret)
			fmt.Fprintf(cmd.ErrOrStderr(), "key id %s for %s (%s). This secret is shown once and cannot be recovered; store it now.\n", k.KeyID, k.Service, e)
			return nil
		},
	}
	mint.Flags().StringVar(&email, "email", "", "account e-mail address (required)")
	mint.Flags().StringVar(&service, "service", "", "answer, gateway or records (required)")
	mint.Flags().StringVar(&name, "name", "", "a label for the key")
	mint.Flags().BoolVar(&mintJSON, "json", false, "print JSON")
	mint.Flags().BoolVar(&createAccount, "create-account", false, "create the account on the free plan if there is none for --email")
	flags.register(mint)
	_ = mint.MarkFlagRequired("email")
	_ = mint.MarkFlagRequired("service")
	return mint
}

// ensureAccount creates the account of email on the free plan for `arr
// keys mint --create-account` and waits until keys can be minted for it.
// It returns nil when the account came to exist meanwhile (another
// command created it).
func ensureAccount(cmd *cobra.Command, s *system, email string) (*commands.AccountCreatedResult, error) {
	res, err := s.app.Commands.CreateAccount.Handle(cmd.Context(), commands.CreateAccount{Email: email, Plan: "free", Metadata: cliMetadata(cmd)})
	if isCode(err, "account_exists") {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if err := s.waitFor(cmd.Context(), identity.Name, res.Position); err != nil {
		return nil, fmt.Errorf("account %s was created but the read model did not catch up: %w", res.AccountID, err)
	}
	return &res, nil
}

// isCode reports whether err is a domain error of code.
func isCode(err error, code string) bool {
	var de *domain.Error
	return errors.As(err, &de) && de.Code == code
}

// revokeKeyCmd is `arr keys revoke`.
func (a *cli) revokeKeyCmd() *cobra.Command {
	var id string
	var revokeJSON bool
	revoke := &cobra.Command{
		Use:   "revoke --id ID",
		Short: "Revoke a key; it stops working at once",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, k, err := a.openWithKey(cmd, id)
			if err != nil {
				return err
			}
			defer s.Close()
			keyID := k.ID
			pos, err := s.app.Commands.RevokeKey.Handle(cmd.Context(), commands.RevokeKey{AccountID: k.AccountID, KeyID: keyID, Metadata: cliMetadata(cmd)})
			if err != nil {
				return err
			}
			if err := s.waitFor(cmd.Context(), identity.Name, pos); err != nil {
				return fmt.Errorf("key %s was revoked but the read model did not catch up: %w", keyID, err)
			}
			if revokeJSON {
				return printJSON(cmd.OutOrStdout(), map[string]any{"id": keyID, "revoked": true, "position": pos})
			}
			fmt.Fprintf(cmd.OutOrStdout(), "key %s revoked\n", keyID)
			return nil
		},
	}
	revoke.Flags().StringVar(&id, "id", "", "key id (required)")
	revoke.Flags().BoolVar(&revokeJSON, "json", false, "print JSON")
	_ = revoke.MarkFlagRequired("id")
	return revoke
}

// listKeysCmd is `arr keys list`.
func (a *cli) listKeysCmd() *cobra.Command {
	var listEmail string
	var listJSON bool
	list := &cobra.Command{
		Use:   "list --email E",
		Short: "List an account's keys (never their secrets)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := account.NormalizeEmail(listEmail)
			if err != nil {
				return err
			}
			s, err := a.open(cmd, openOptions{catchUp: []string{identity.Name}})
			if err != nil {
				return err
			}
			defer s.Close()
			acc, err := s.app.Queries.Identities.AccountByEmail(cmd.Context(), e)
			if err != nil {
				return err
			}
			keys, err := s.app.Queries.Identities.Keys(cmd.Context(), acc.ID)
			if err != nil {
				return err
			}
			listed, err := withSpend(cmd.Context(), s, keys)
			if err != nil {
				return err
			}
			if listJSON {
				return printJSON(cmd.OutOrStdout(), listed)
			}
			printKeys(cmd, listed)
			return nil
		},
	}
	list.Flags().StringVar(&listEmail, "email", "", "account e-mail address (required)")
	list.Flags().BoolVar(&listJSON, "json", false, "print JSON")
	_ = list.MarkFlagRequired("email")
	return list
}

func printKeys(cmd *cobra.Command, keys []listedKey) {
	tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSERVICE\tKEY\tNAME\tCREATED\tSTATUS\tLIMITS\tSPENT")
	for _, k := range keys {
		status := "active"
		if k.RevokedAt != nil {
			status = "revoked " + k.RevokedAt.Format("2006-01-02T15:04:05Z")
		}
		spent := "-"
		if k.Spend != nil {
			spent = fmt.Sprintf("$%s this %s", account.MicroUSD(k.Spend.Used).USD(), k.Spend.Period)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s…%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.Service, k.Prefix, k.Hint, k.Name, k.CreatedAt.Format("2006-01-02T15:04:05Z"), status,
			k.KeyInfo.Limits.Describe(), spent)
	}
	_ = tw.Flush()
}

// openWithKey parses a key id (--id), opens the system with the identity
// read model caught up and loads the key; the caller closes the system.
func (a *cli) openWithKey(cmd *cobra.Command, id string) (*system, identity.KeyInfo, error) {
	keyID, err := uuid.Parse(id)
	if err != nil {
		return nil, identity.KeyInfo{}, domain.Invalid("invalid_key_id", "id", "--id must be a key id (a UUID); got %q", id)
	}
	s, err := a.open(cmd, openOptions{catchUp: []string{identity.Name}})
	if err != nil {
		return nil, identity.KeyInfo{}, err
	}
	k, err := s.app.Queries.Identities.Key(cmd.Context(), keyID)
	if err != nil {
		s.Close()
		return nil, identity.KeyInfo{}, err
	}
	return s, k, nil
}
