package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/projections/identity"
	"github.com/arr-dev/arr/projections/monitors"
)

// monitorsCmd is `arr monitors`: an account's list monitors.
func (a *cli) monitorsCmd() *cobra.Command {
	c := &cobra.Command{Use: "monitors", Short: "Manage an account's list monitors (webhooks told of new and ended signals)"}
	c.AddCommand(a.monitorsCreateCmd(), a.monitorsListCmd(), a.monitorsDeleteCmd())
	return c
}

// accountID finds the account of an e-mail address.
func (a *cli) accountID(cmd *cobra.Command, s *system, email string) (uuid.UUID, string, error) {
	addr, err := account.NormalizeEmail(email)
	if err != nil {
		return uuid.Nil, "", err
	}
	acct, err := s.app.Queries.Identities.AccountByEmail(cmd.Context(), addr)
	if err != nil {
		return uuid.Nil, "", err
	}
	return acct.ID, acct.Email, nil
}

func (a *cli) monitorsCreateCmd() *cobra.Command {
	var email, list, target, layers string
	var asJSON bool
	c := &cobra.Command{
		Use:   "create --email E --list LIST_ID --url URL [--layers a,b]",
		Short: "Watch one of an account's lists: prints the monitor's id and its whsec_ signing secret, once",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			listID, err := uuid.Parse(list)
			if err != nil {
				return fmt.Errorf("--list %q is not a list id (arr import list prints it)", list)
			}
			s, err := a.open(cmd, openOptions{catchUp: []string{identity.Name}, contactKeys: true})
			if err != nil {
				return err
			}
			defer s.Close()
			id, addr, err := a.accountID(cmd, s, email)
			if err != nil {
				return err
			}
			res, err := s.app.Commands.CreateMonitor.Handle(cmd.Context(), commands.CreateMonitor{AccountID: id, ListID: listID, URL: target,
				Layers: layers, Metadata: cliMetadata(cmd)})
			if err != nil {
				return err
			}
			if err := s.waitFor(cmd.Context(), monitors.Name, res.Position); err != nil {
				return err
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), res)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "monitor %s of %s watches list %s, delivering to %s\nsigning secret (shown once): %s\n",
				res.MonitorID, addr, res.ListID, res.URL, res.Secret)
			return nil
		},
	}
	c.Flags().StringVar(&email, "email", "", "the account's e-mail address (required)")
	c.Flags().StringVar(&list, "list", "", "the watched list's id (required)")
	c.Flags().StringVar(&target, "url", "", "the webhook URL deliveries are POSTed to (required)")
	c.Flags().StringVar(&layers, "layers", "", "comma-separated layer keys to watch; default every layer")
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	for _, f := range []string{"email", "list", "url"} {
		_ = c.MarkFlagRequired(f)
	}
	return c
}

func (a *cli) monitorsListCmd() *cobra.Command {
	var email string
	var asJSON, deleted bool
	c := &cobra.Command{
		Use:   "list --email E",
		Short: "List an account's monitors (never their secrets)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := a.open(cmd, openOptions{catchUp: []string{identity.Name, monitors.Name}})
			if err != nil {
				return err
			}
			defer s.Close()
			id, _, err := a.accountID(cmd, s, email)
			if err != nil {
				return err
			}
			ms, total, err := s.app.Queries.Monitors.List(cmd.Context(), id, deleted, 1000, 0)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), map[string]any{"data": ms, "total": total})
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "MONITOR\tLIST\tURL\tLAYERS\tCREATED\tDELETED")
			for _, m := range ms {
				del := ""
				if m.DeletedAt != nil {
					del = m.DeletedAt.Format("2006-01-02 15:04")
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%v\t%s\t%s\n", m.MonitorID, m.ListID, m.URL, m.Layers, m.CreatedAt.Format("2006-01-02 15:04"), del)
			}
			return w.Flush()
		},
	}
	c.Flags().StringVar(&email, "email", "", "the account's e-mail address (required)")
	c.Flags().BoolVar(&deleted, "deleted", false, "list deleted monitors too")
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	_ = c.MarkFlagRequired("email")
	return c
}

func (a *cli) monitorsDeleteCmd() *cobra.Command {
	var email string
	c := &cobra.Command{
		Use:   "delete --email E MONITOR_ID",
		Short: "Stop one of an account's monitors",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			mid, err := uuid.Parse(args[0])
			if err != nil {
				return fmt.Errorf("%q is not a monitor id (arr monitors list prints them)", args[0])
			}
			s, err := a.open(cmd, openOptions{catchUp: []string{identity.Name}})
			if err != nil {
				return err
			}
			defer s.Close()
			id, _, err := a.accountID(cmd, s, email)
			if err != nil {
				return err
			}
			pos, err := s.app.Commands.DeleteMonitor.Handle(cmd.Context(), commands.DeleteMonitor{AccountID: id, MonitorID: mid, Metadata: cliMetadata(cmd)})
			if err != nil {
				return err
			}
			if err := s.waitFor(cmd.Context(), monitors.Name, pos); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "monitor %s deleted\n", mid)
			return nil
		},
	}
	c.Flags().StringVar(&email, "email", "", "the account's e-mail address (required)")
	_ = c.MarkFlagRequired("email")
	return c
}
