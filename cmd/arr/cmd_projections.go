package main

import (
	"context"
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
)

func (a *cli) projectionsCmd() *cobra.Command {
	c := &cobra.Command{Use: "projections", Short: "Inspect, rebuild and replay read models"}

	var asJSON bool
	var sample time.Duration
	status := &cobra.Command{
		Use:   "status",
		Short: "Position, lag and rate of every projection",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := a.open(cmd, openOptions{})
			if err != nil {
				return err
			}
			defer s.Close()
			head, out, err := s.app.Queries.Status.Rates(cmd.Context(), s.app.Head, sample)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), map[string]any{"head": head, "projections": out})
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintf(tw, "log head: %d\nNAME\tPOSITION\tLAG\tEVENTS/S\tUPDATED\n", head)
			for _, p := range out {
				fmt.Fprintf(tw, "%s\t%d\t%d\t%.1f\t%s\n", p.Name, p.Position, p.LagEvents, p.RatePerSec, p.UpdatedAt.Format(time.RFC3339))
			}
			return tw.Flush()
		},
	}
	status.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	status.Flags().DurationVar(&sample, "sample", time.Second, "how long to watch positions to measure the rate")

	rebuild := &cobra.Command{
		Use:   "rebuild NAME|all",
		Short: "Rebuild a read model from the whole log into shadow tables, then swap it in atomically",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.replay(cmd.Context(), args[0], 0)
		},
	}
	var from uint64
	replay := &cobra.Command{
		Use:   "replay NAME --from POS",
		Short: "Rebuild a read model from the events after POS only, then swap it in atomically",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.replay(cmd.Context(), args[0], from)
		},
	}
	replay.Flags().Uint64Var(&from, "from", 0, "log position to replay after (0 = the whole log)")
	c.AddCommand(status, rebuild, replay)
	c.AddCommand(a.parkedCmds()...)
	c.AddCommand(a.sqlProjectionCmds()...)
	return c
}

// nonNil prints an empty list as [] rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func (a *cli) replay(ctx context.Context, name string, from uint64) error {
	s, err := openSystem(ctx, a.cfg, a.cfg.logger(), openOptions{setup: true})
	if err != nil {
		return err
	}
	defer s.Close()
	names := []string{name}
	if name == "all" {
		names = nil
		for _, p := range s.runner.Projections() {
			names = append(names, p.Name)
		}
	}
	for _, n := range names {
		if _, err := s.runner.Get(n); err != nil {
			return err
		}
		verb := "rebuild " + n
		if from > 0 {
			verb = fmt.Sprintf("replay %s from %d", n, from)
		}
		p := newProgress(os.Stderr, verb)
		if err := s.runner.Replay(ctx, n, from, p.Set); err != nil {
			return err
		}
		p.Finish()
	}
	return nil
}
