package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/arr-dev/arr/projections/logstats"

	"github.com/spf13/cobra"

	"github.com/arr-dev/arr/eventstore"
)

func (a *cli) eventsCmd() *cobra.Command {
	c := &cobra.Command{Use: "events", Short: "Read the event log: tail, export, stats, types (the event catalog); sign and verify its Merkle tree: checkpoint, verify, disown-heads"}
	c.AddCommand(a.eventsTailCmd(), a.eventsExportCmd(), a.eventsStatsCmd(), a.eventsTypesCmd(), a.eventsCheckpointCmd(), a.eventsVerifyCmd(), a.eventsDisownHeadsCmd())
	return c
}

// eventsTailCmd is `arr events tail`.
func (a *cli) eventsTailCmd() *cobra.Command {
	var from int64
	var follow, tailJSON bool
	var last uint64
	tail := &cobra.Command{
		Use:   "tail [--from POS] [--last N] [--follow=false] [--json]",
		Short: "Print events as they are committed (the last 10, then follow)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := a.open(cmd, openOptions{})
			if err != nil {
				return err
			}
			defer s.Close()
			after := uint64(max(from, 0))
			if from < 0 {
				head, err := s.store.Head(cmd.Context())
				if err != nil {
					return err
				}
				after = head - min(head, last)
			}
			w := bufio.NewWriter(cmd.OutOrStdout())
			print := func(_ context.Context, evs []eventstore.Event) error {
				for _, e := range evs {
					if tailJSON {
						b, _ := json.Marshal(e)
						w.Write(append(b, '\n'))
					} else {
						fmt.Fprintf(w, "%d\t%s\t%s@%d\t%s\t%s\n", e.Position, e.RecordedAt.Format(time.RFC3339Nano), e.StreamID, e.StreamVersion, e.Type, e.Data)
					}
				}
				return w.Flush()
			}
			if !follow {
				for {
					evs, err := s.store.ReadAll(cmd.Context(), after, eventstore.DefaultBatch)
					if err != nil || len(evs) == 0 {
						return err
					}
					if err := print(cmd.Context(), evs); err != nil {
						return err
					}
					after = evs[len(evs)-1].Position
				}
			}
			return s.store.Subscribe(cmd.Context(), after, print)
		},
	}
	tail.Flags().Int64Var(&from, "from", -1, "start after this position (default: the last --last events)")
	tail.Flags().Uint64Var(&last, "last", 10, "how many past events to show first when --from is not given")
	tail.Flags().BoolVar(&follow, "follow", true, "keep printing new events until interrupted")
	tail.Flags().BoolVar(&tailJSON, "json", false, "one JSON object per line")
	return tail
}

// eventsStatsCmd is `arr events stats`.
func (a *cli) eventsStatsCmd() *cobra.Command {
	var statsJSON bool
	stats := &cobra.Command{
		Use:   "stats",
		Short: "Events per type and per stream category, from the logstats read model",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := a.open(cmd, openOptions{catchUp: []string{logstats.Name}})
			if err != nil {
				return err
			}
			defer s.Close()
			head, err := s.store.Head(cmd.Context())
			if err != nil {
				return err
			}
			types, cats, err := logstats.Stats(cmd.Context(), s.pool)
			if err != nil {
				return err
			}
			if statsJSON {
				return printJSON(cmd.OutOrStdout(), map[string]any{"head": head, "types": types, "categories": cats})
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintf(tw, "log head: %d\n\nEVENT TYPE\tEVENTS\tFIRST\tLAST\tLAST AT\n", head)
			for _, t := range types {
				fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\n", t.Type, t.Events, t.FirstPosition, t.LastPosition, t.LastAt.Format(time.RFC3339))
			}
			fmt.Fprintf(tw, "\nSTREAM CATEGORY\tSTREAMS\tEVENTS\tLAST\tLAST AT\n")
			for _, c := range cats {
				fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\n", c.Category, c.Streams, c.Events, c.LastPosition, c.LastAt.Format(time.RFC3339))
			}
			return tw.Flush()
		},
	}
	stats.Flags().BoolVar(&statsJSON, "json", false, "print JSON")
	return stats
}
