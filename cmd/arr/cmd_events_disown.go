package main

import (
	"crypto/ed25519"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/arr-dev/arr/commands"
)

// eventsDisownHeadsCmd is `arr events disown-heads`: the repair of a log
// whose kept heads include heads its key did not sign.
func (a *cli) eventsDisownHeadsCmd() *cobra.Command {
	var reason, by string
	var asJSON bool
	c := &cobra.Command{
		Use:   "disown-heads --reason TEXT [--by WHO] [--json]",
		Short: "Disown the kept heads the log's key did not sign (recorded in the log), then sign a new head with the log's key",
		Long: "Find every kept signed head that does not verify under the log's key (the key the database records; a head a\n" +
			"process with another signing key signed, or one written into the database), append a LogHeadsDisowned event\n" +
			"that names them, the log's key and the reason, and disown them: they stay in the database as they were but are\n" +
			"no longer served on /v1/log, used by `arr events verify` or extended. Then sign a head of the log (which now\n" +
			"includes the event) with the log's key and print it. Needs the log's signing key (ARR_LOG_SIGNING_KEY or\n" +
			"ARR_DATA_DIR/" + logKeyFile + "). With no such head it records nothing and exits 2.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			by, err := who(by)
			if err != nil {
				return err
			}
			s, err := a.open(cmd, openOptions{signingKey: true})
			if err != nil {
				return err
			}
			defer s.Close()
			st, err := s.merkleStore()
			if err != nil {
				return err
			}
			signer, err := s.logSigner(s.log)
			if err != nil {
				return err
			}
			h, err := commands.NewDisownHeadsHandler(st, st, s.now)
			if err != nil {
				return err
			}
			// The bound key: the one the database records.
			pub := s.signingKey.Public().(ed25519.PublicKey)
			res, err := h.Handle(cmd.Context(), commands.DisownHeads{LogKey: pub, Origin: a.cfg.LogOrigin, Reason: reason, By: by,
				Metadata: commands.NewMetadata("cli:"+by, "")})
			if err != nil {
				return err
			}
			head, _, err := signer.Sign(cmd.Context())
			if err != nil {
				return fmt.Errorf("the heads are disowned (event at position %d), but signing a new head failed: %w", res.Position, err)
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), map[string]any{"disowned": res.Heads, "position": res.Position, "head": headOut(head)})
			}
			w := cmd.OutOrStdout()
			for _, d := range res.Heads {
				fmt.Fprintf(w, "disowned the head of size %d (root %s, key %s)\n", d.Size, d.RootHash, d.KeyFingerprint)
			}
			fmt.Fprintf(w, "recorded as LogHeadsDisowned at position %d; signed the head of %d events with the log's key:\nverifier key: %s\n\n%s",
				res.Position, head.Size, head.VerifierKey, head.Checkpoint)
			return nil
		},
	}
	c.Flags().StringVar(&reason, "reason", "", "why the heads are disowned, recorded in the log (required)")
	c.Flags().StringVar(&by, "by", "", "who disowns them (default: the operating-system user)")
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	_ = c.MarkFlagRequired("reason")
	return c
}
