package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/domain/audit"
)

func (a *cli) auditCmd() *cobra.Command {
	c := &cobra.Command{Use: "audit", Short: "Check the gateway's audit chain"}
	var from uint64
	var asJSON bool
	verify := &cobra.Command{
		Use:   "verify [--from POS] [--json]",
		Short: "Walk the audit chain in the event log and name the first broken link (exit 1)",
		Long: "Walk the audit chain (the CompletionRecorded events of stream " + audit.StreamID + ") and check every entry: its sequence\n" +
			"number, its prev_hash against the hash of the entry before it, and its hash by the entry's link algorithm:\n" +
			"  link 1 (entries without a \"link\" field, schema version 1): " + audit.LinkV1Rule + "\n" +
			"  link 2: " + audit.LinkV2Rule + ",\n  where " + audit.PayloadSHA256Rule + "\n" +
			"--from starts at the first entry at or after that log position (its link to the entry before is checked too).\n" +
			"Exit status 0: the chain verifies; 1: it does not, and the first broken entry's log position is named.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := a.open(cmd, openOptions{})
			if err != nil {
				return err
			}
			defer s.Close()
			res, err := commands.VerifyChain(cmd.Context(), s.store, from)
			if err != nil {
				return err
			}
			if asJSON {
				if err := printJSON(cmd.OutOrStdout(), res); err != nil {
					return err
				}
			} else if res.OK {
				fmt.Fprintf(cmd.OutOrStdout(), "audit chain verifies: %d entries checked (seq %d..%d, log positions %d..%d), head %s\n",
					res.Checked, res.FirstSeq, res.LastSeq, res.FirstPosition, res.LastPosition, res.HeadHash)
			} else {
				fmt.Fprintf(cmd.OutOrStdout(), "audit chain BROKEN at log position %d (seq %d, event %s): %s\n%d entries verified before it\n",
					res.Broken.Position, res.Broken.Seq, res.Broken.EventID, res.Broken.Problem, res.Checked)
			}
			if !res.OK {
				return errChainBroken{pos: res.Broken.Position}
			}
			return nil
		},
	}
	verify.Flags().Uint64Var(&from, "from", 0, "start at the first entry at or after this log position")
	verify.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	c.AddCommand(verify)
	return c
}

// errChainBroken makes arr exit with status 1 after the report.
type errChainBroken struct{ pos uint64 }

func (e errChainBroken) Error() string {
	return fmt.Sprintf("audit chain broken at log position %d", e.pos)
}
