package main

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/arr-dev/arr/domain/catalog"
	"github.com/arr-dev/arr/projections/eventcatalog"
	"github.com/arr-dev/arr/projections/logstats"
)

func (a *cli) eventsTypesCmd() *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "types [TYPE] [--json]",
		Short: "The event catalog: every event type, its schema versions, the version handlers receive, its payload's fields and JSON Schema, and its count and first and last position in the log",
		Long: `Lists every registered event type with its current schema version, the older
versions that are upcast to it on every read, the version a handler (a
projection, built-in or SQL) receives, and its count and first and last
position in the log (from the logstats read model). With a TYPE, prints that
type's fields with their meanings; --json adds the payload's JSON Schema.
docs/events.md is the same catalog without the log's figures.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			docs, err := eventcatalog.EmbeddedDocs()
			if err != nil {
				return err
			}
			types, err := eventcatalog.Build(catalog.Registry(), docs)
			if err != nil {
				return err
			}
			s, err := a.open(cmd, openOptions{catchUp: []string{logstats.Name}})
			if err != nil {
				return err
			}
			defer s.Close()
			head, err := s.store.Head(cmd.Context())
			if err != nil {
				return err
			}
			stats, _, err := logstats.Stats(cmd.Context(), s.pool)
			if err != nil {
				return err
			}
			ls := make([]eventcatalog.LogStat, len(stats))
			for i, t := range stats {
				ls[i] = eventcatalog.LogStat{Type: t.Type, Events: t.Events, FirstPosition: uint64(t.FirstPosition), LastPosition: uint64(t.LastPosition), FirstAt: t.FirstAt, LastAt: t.LastAt}
			}
			types = eventcatalog.WithLog(types, ls)
			if len(args) == 1 {
				return printEventType(cmd, types, args[0], asJSON)
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), map[string]any{"head": head, "types": types})
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintf(tw, "log head: %d\n\nEVENT TYPE\tVERSION\tUPCAST FROM\tHANDLERS GET\tEVENTS\tFIRST\tLAST\tLAST AT\n", head)
			for _, t := range types {
				version, upcast, handlers := fmt.Sprint(t.SchemaVersion), versionList(t.UpcastFrom), fmt.Sprintf("v%d", t.HandlerVersion)
				if !t.Registered {
					version, upcast, handlers = "?", "-", "(unknown to this build: skipped)"
				}
				first, last, lastAt := "-", "-", "-"
				if t.Events > 0 {
					first, last, lastAt = fmt.Sprint(t.FirstPosition), fmt.Sprint(t.LastPosition), t.LastAt.Format(time.RFC3339)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", t.Type, version, upcast, handlers, t.Events, first, last, lastAt)
			}
			return tw.Flush()
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON, with each payload's JSON Schema")
	return c
}

// printEventType prints one type of the catalog: its versions and fields,
// or with asJSON its whole entry.
func printEventType(cmd *cobra.Command, types []eventcatalog.Type, name string, asJSON bool) error {
	for _, t := range types {
		if t.Type != name {
			continue
		}
		if asJSON {
			return printJSON(cmd.OutOrStdout(), t)
		}
		w := cmd.OutOrStdout()
		fmt.Fprintf(w, "%s (%s)\n%s\n\n", t.Type, t.GoType, t.Description)
		fmt.Fprintf(w, "schema version %d; stored versions upcast on read: %s; handlers receive version %d\n", t.SchemaVersion, versionList(t.UpcastFrom), t.HandlerVersion)
		fmt.Fprintf(w, "in the log: %d events", t.Events)
		if t.Events > 0 {
			fmt.Fprintf(w, ", positions %d to %d, %s to %s", t.FirstPosition, t.LastPosition, t.FirstAt.Format(time.RFC3339), t.LastAt.Format(time.RFC3339))
		}
		fmt.Fprint(w, "\n\n")
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "FIELD\tTYPE\tREQUIRED\tMEANING\n")
		for _, f := range t.Fields {
			req := "no"
			if f.Required {
				req = "yes"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", f.Path, f.Type, req, strings.ReplaceAll(f.Description, "\n", " "))
		}
		return tw.Flush()
	}
	return fmt.Errorf("event type %q is not in the catalog: `arr events types` lists them", name)
}

func versionList(vs []int) string {
	if len(vs) == 0 {
		return "-"
	}
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = fmt.Sprintf("v%d", v)
	}
	return strings.Join(s, ",")
}
