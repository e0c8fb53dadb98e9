package main

import (
	"encoding/json"
	"io"
	"os"

	"github.com/spf13/cobra"
)

// cli is what every subcommand shares: the configuration and the build
// version.
type cli struct {
	cfg     Config
	version string
}

func newRoot(version string) *cobra.Command {
	a := &cli{version: version}
	root := &cobra.Command{
		Use:           "arr",
		Short:         "arr: the answer service, routing gateway and records service on one event log",
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
		// Every subcommand starts from a configuration that parsed
		// strictly: a bad value stops arr before it does anything.
		PersistentPreRunE: func(*cobra.Command, []string) error { return a.cfg.Validate() },
	}
	a.cfg.bind(root.PersistentFlags(), os.Getenv)
	accounts := a.accountsCmd()
	accounts.AddCommand(a.accountsEraseCmd())
	root.AddCommand(
		a.upCmd(), a.serveCmd(), a.migrateCmd(), a.eventsCmd(), a.projectionsCmd(),
		accounts, a.keysCmd(), a.answerCmd(), a.loadCmd(), a.importCmd(), a.monitorsCmd(), a.auditCmd(), a.guardrailsCmd(),
	)
	return root
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
