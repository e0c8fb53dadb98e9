package main

import (
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/projections"
)

// parkedCmds are `arr projections parked` and `arr projections retry`:
// the events projections could not apply and moved past.
func (a *cli) parkedCmds() []*cobra.Command {
	return []*cobra.Command{a.parkedCmd(), a.retryCmd()}
}

// parkedCmd is `arr projections parked`.
func (a *cli) parkedCmd() *cobra.Command {
	var asJSON bool
	var q projections.ParkedQuery
	parked := &cobra.Command{
		Use:   "parked [NAME] [--json] [--limit N] [--after POSITION]",
		Short: "List the events projections parked because they could not apply them (position, projection, error), a page at a time, with the total",
		Long: `Lists parked events by position, at most --limit (default 100) a page, with the
total parked. The next page starts after the last position listed: the
output names it (JSON: next_after, null on the last page). Listing every
projection, a page keeps all the events parked at its last position
together, so it may be a few longer than --limit.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if q.Limit < 1 || q.Limit > projections.MaxParkedLimit {
				return domain.Invalid("invalid_limit", "limit", "--limit must be from 1 to %d; got %d", projections.MaxParkedLimit, q.Limit)
			}
			s, err := a.open(cmd, openOptions{})
			if err != nil {
				return err
			}
			defer s.Close()
			q.Projection = ""
			if len(args) == 1 {
				if _, err := s.runner.Get(args[0]); err != nil {
					return err
				}
				q.Projection = args[0]
			}
			page, err := projections.ListParked(cmd.Context(), s.pool, q)
			if err != nil {
				return err
			}
			page.Events = nonNil(page.Events)
			if asJSON {
				return printJSON(cmd.OutOrStdout(), page)
			}
			return printParked(cmd.OutOrStdout(), q, page)
		},
	}
	parked.Flags().BoolVar(&asJSON, "json", false, "print JSON: parked, total, next_after")
	parked.Flags().IntVar(&q.Limit, "limit", projections.DefaultParkedLimit, fmt.Sprintf("events per page (1 to %d)", projections.MaxParkedLimit))
	parked.Flags().Uint64Var(&q.After, "after", 0, "list the events parked after this log position (the previous page's next_after)")
	return parked
}

// retryCmd is `arr projections retry`.
func (a *cli) retryCmd() *cobra.Command {
	var retryJSON bool
	retry := &cobra.Command{
		Use:   "retry NAME",
		Short: "Apply all of a projection's parked events again (after fixing what made them fail); exit 1 if any is still parked",
		Long: `Applies every event NAME had parked when the retry starts, oldest first, in
transactions of 500 (each holds the projection's checkpoint, so the running
projection waits meanwhile). An event that applies is no longer parked; one
that fails again stays parked with its new error. It reports how many were
applied and how many are still parked, with the first 100 still failing
(arr projections parked NAME lists them all). Stopped part-way, the events
applied so far stay applied; run it again for the rest.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := a.open(cmd, openOptions{})
			if err != nil {
				return err
			}
			defer s.Close()
			name := args[0]
			p := newProgress(os.Stderr, "retry "+name)
			res, err := s.runner.RetryParked(cmd.Context(), name, p.Set)
			if err != nil {
				return err
			}
			p.Finish()
			res.Failing = nonNil(res.Failing)
			w := cmd.OutOrStdout()
			if retryJSON {
				if err := printJSON(w, map[string]any{"projection": name, "applied": res.Applied, "still_parked": res.StillParked, "failing": res.Failing}); err != nil {
					return err
				}
			} else {
				fmt.Fprintf(w, "%s: %d parked event(s) applied, %d still parked\n", name, res.Applied, res.StillParked)
				for _, pe := range res.Failing {
					fmt.Fprintf(w, "  position %d (%s): %s\n", pe.Position, shown(pe.EventType), shown(pe.Error))
				}
				if res.StillParked > int64(len(res.Failing)) {
					fmt.Fprintf(w, "  (arr projections parked %s lists all %d)\n", name, res.StillParked)
				}
			}
			if res.StillParked > 0 {
				return fmt.Errorf("%d parked event(s) of %s still fail", res.StillParked, name)
			}
			return nil
		},
	}
	retry.Flags().BoolVar(&retryJSON, "json", false, "print JSON: projection, applied, still_parked, failing")
	return retry
}

// printParked prints a page of parked events as a table and says which
// part of the total it shows and how to get the next page.
func printParked(w io.Writer, q projections.ParkedQuery, page projections.ParkedPage) error {
	if page.Total == 0 {
		_, err := fmt.Fprintln(w, "no parked events")
		return err
	}
	if len(page.Events) > 0 {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "PROJECTION\tPOSITION\tTYPE\tATTEMPTS\tPARKED\tERROR")
		for _, pe := range page.Events {
			fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%s\t%s\n", shown(pe.Projection), pe.Position, shown(pe.EventType), pe.Attempts, pe.ParkedAt.Format(time.RFC3339), shown(pe.Error))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "showing %d of %d parked event(s)", len(page.Events), page.Total)
	if page.NextAfter != nil {
		next := "arr projections parked"
		if q.Projection != "" {
			next += " " + q.Projection
		}
		fmt.Fprintf(w, "; next page: %s --limit %d --after %d", next, q.Limit, *page.NextAfter)
	}
	_, err := fmt.Fprintln(w)
	return err
}
