package main

import (
	"context"
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/arr-dev/arr/projections"
)

type projectionStatus struct {
	Name       string    `json:"name"`
	Position   int64     `json:"position"`
	LagEvents  int64     `json:"lag_events"`
	RatePerSec float64   `json:"events_per_second"`
	UpdatedAt  time.Time `json:"updated_at"`
}

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
			first, err := readCheckpoints(cmd.Context(), s)
			if err != nil {
				return err
			}
			time.Sleep(sample)
			second, err := readCheckpoints(cmd.Context(), s)
			if err != nil {
				return err
			}
			head, err := s.store.Head(cmd.Context())
			if err != nil {
				return err
			}
			var out []projectionStatus
			for _, p := range second {
				p.LagEvents = max(int64(head)-p.Position, 0)
				for _, f := range first {
					if f.Name == p.Name && sample > 0 {
						p.RatePerSec = float64(p.Position-f.Position) / sample.Seconds()
					}
				}
				out = append(out, p)
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
	var parkedJSON bool
	parked := &cobra.Command{
		Use:   "parked [NAME]",
		Short: "List the events projections parked because they could not apply them (position, projection, error)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := a.open(cmd, openOptions{})
			if err != nil {
				return err
			}
			defer s.Close()
			name := ""
			if len(args) == 1 {
				if _, err := s.runner.Get(args[0]); err != nil {
					return err
				}
				name = args[0]
			}
			list, err := projections.Parked(cmd.Context(), s.pool, name, 0)
			if err != nil {
				return err
			}
			if parkedJSON {
				return printJSON(cmd.OutOrStdout(), map[string]any{"parked": nonNil(list)})
			}
			if len(list) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "no parked events")
				return nil
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "PROJECTION\tPOSITION\tTYPE\tATTEMPTS\tPARKED\tERROR")
			for _, pe := range list {
				fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%s\t%s\n", pe.Projection, pe.Position, pe.EventType, pe.Attempts, pe.ParkedAt.Format(time.RFC3339), pe.Error)
			}
			return tw.Flush()
		},
	}
	parked.Flags().BoolVar(&parkedJSON, "json", false, "print JSON")

	var retryJSON bool
	retry := &cobra.Command{
		Use:   "retry NAME",
		Short: "Apply a projection's parked events again (after fixing what made them fail); exit 1 if any still fails",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := a.open(cmd, openOptions{})
			if err != nil {
				return err
			}
			defer s.Close()
			res, err := s.runner.RetryParked(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if retryJSON {
				if err := printJSON(cmd.OutOrStdout(), map[string]any{"applied": nonNil(res.Applied), "still_parked": nonNil(res.StillParked)}); err != nil {
					return err
				}
			} else {
				fmt.Fprintf(cmd.OutOrStdout(), "%s: %d parked event(s) applied, %d still failing\n", args[0], len(res.Applied), len(res.StillParked))
				for _, pe := range res.StillParked {
					fmt.Fprintf(cmd.OutOrStdout(), "  position %d (%s): %s\n", pe.Position, pe.EventType, pe.Error)
				}
			}
			if len(res.StillParked) > 0 {
				return fmt.Errorf("%d parked event(s) of %s still fail", len(res.StillParked), args[0])
			}
			return nil
		},
	}
	retry.Flags().BoolVar(&retryJSON, "json", false, "print JSON")
	c.AddCommand(status, rebuild, replay, parked, retry)
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
			names = append(names, p.Name())
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

func readCheckpoints(ctx context.Context, s *system) ([]projectionStatus, error) {
	cps, err := projections.Checkpoints(ctx, s.pool)
	if err != nil {
		return nil, err
	}
	out := make([]projectionStatus, len(cps))
	for i, c := range cps {
		out[i] = projectionStatus{Name: c.Name, Position: c.Position, UpdatedAt: c.UpdatedAt}
	}
	return out, nil
}
