package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	"github.com/arr-dev/arr/projections/logstats"

	"github.com/spf13/cobra"

	"github.com/arr-dev/arr/eventstore"
)

func (a *cli) eventsCmd() *cobra.Command {
	c := &cobra.Command{Use: "events", Short: "Read the event log: tail, export, stats; sign and verify its Merkle tree: checkpoint, verify"}

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

	var expFrom, expTo uint64
	var format string
	export := &cobra.Command{
		Use:   "export --from POS [--to POS] --format ndjson",
		Short: "Write events to stdout as NDJSON (progress on stderr)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if format != "ndjson" {
				return fmt.Errorf("--format %q: only ndjson is supported", format)
			}
			if expTo != 0 && expTo <= expFrom {
				return fmt.Errorf("--to (%d) must be greater than --from (%d)", expTo, expFrom)
			}
			s, err := a.open(cmd, openOptions{})
			if err != nil {
				return err
			}
			defer s.Close()
			end := expTo
			if end == 0 {
				if end, err = s.store.Head(cmd.Context()); err != nil {
					return err
				}
			}
			p := newProgress(os.Stderr, "export")
			w := bufio.NewWriterSize(cmd.OutOrStdout(), 1<<20)
			enc := json.NewEncoder(w)
			pos, n := expFrom, uint64(0)
			for pos < end {
				evs, err := s.store.ReadAll(cmd.Context(), pos, eventstore.DefaultBatch*5)
				if err != nil {
					return err
				}
				if len(evs) == 0 {
					break
				}
				for _, e := range evs {
					if e.Position > end {
						break
					}
					if err := enc.Encode(e); err != nil {
						return err
					}
					n++
					pos = e.Position
				}
				if evs[len(evs)-1].Position > end {
					break
				}
				p.Set(pos-expFrom, end-expFrom)
			}
			if err := w.Flush(); err != nil {
				return err
			}
			p.done = n
			p.Finish()
			return nil
		},
	}
	export.Flags().Uint64Var(&expFrom, "from", 0, "export events after this position")
	export.Flags().Uint64Var(&expTo, "to", 0, "export up to and including this position (default: the head at start)")
	export.Flags().StringVar(&format, "format", "ndjson", "output format: ndjson")

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
	c.AddCommand(tail, export, stats, a.eventsCheckpointCmd(), a.eventsVerifyCmd())
	return c
}
