package main

import (
	"fmt"

	"github.com/arr-dev/arr/projections/identity"

	"github.com/spf13/cobra"

	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/eventstore"
)

func cliMetadata(cmd *cobra.Command) eventstore.Metadata {
	return commands.NewMetadata("cli:"+cmd.CommandPath(), "")
}

func (a *cli) accountsCmd() *cobra.Command {
	c := &cobra.Command{Use: "accounts", Short: "Create and show accounts"}
	var email, plan string
	var asJSON bool
	create := &cobra.Command{
		Use:   "create --email E [--plan free|starter|pro|scale|enterprise]",
		Short: "Create an account",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := a.open(cmd, openOptions{setup: true})
			if err != nil {
				return err
			}
			defer s.Close()
			res, err := s.app.Commands.CreateAccount.Handle(cmd.Context(), commands.CreateAccount{Email: email, Plan: plan, Metadata: cliMetadata(cmd)})
			if err != nil {
				return err
			}
			if err := s.waitFor(cmd.Context(), identity.Name, res.Position); err != nil {
				return err
			}
			out := map[string]any{"id": res.AccountID, "email": res.Email, "plan": res.Plan, "position": res.Position}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), out)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "account %s created for %s on the %s plan\n", res.AccountID, res.Email, res.Plan)
			return nil
		},
	}
	create.Flags().StringVar(&email, "email", "", "e-mail address (required)")
	create.Flags().StringVar(&plan, "plan", "free", "plan: free, starter, pro, scale or enterprise")
	create.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	_ = create.MarkFlagRequired("email")

	var showEmail string
	var showJSON bool
	show := &cobra.Command{
		Use:   "show --email E",
		Short: "Show an account and its keys",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := a.open(cmd, openOptions{catchUp: []string{identity.Name}})
			if err != nil {
				return err
			}
			defer s.Close()
			e, err := account.NormalizeEmail(showEmail)
			if err != nil {
				return err
			}
			acc, err := s.app.Queries.Identities.AccountByEmail(cmd.Context(), e)
			if err != nil {
				return err
			}
			infos, err := s.app.Queries.Identities.Keys(cmd.Context(), acc.ID)
			if err != nil {
				return err
			}
			keys, err := withSpend(cmd.Context(), s, infos)
			if err != nil {
				return err
			}
			if showJSON {
				return printJSON(cmd.OutOrStdout(), map[string]any{"account": acc, "keys": keys})
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s  %s  plan=%s  created=%s\n", acc.ID, acc.Email, acc.Plan, acc.CreatedAt.Format("2006-01-02T15:04:05Z"))
			printKeys(cmd, keys)
			return nil
		},
	}
	show.Flags().StringVar(&showEmail, "email", "", "e-mail address (required)")
	show.Flags().BoolVar(&showJSON, "json", false, "print JSON")
	_ = show.MarkFlagRequired("email")
	c.AddCommand(create, show, a.accountBudgetCmd())
	return c
}
