package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/arr-dev/arr/domain/catalog"
	"github.com/arr-dev/arr/eventstore/export"
)

// exportFlags are the flags of arr events export.
type exportFlags struct {
	from, to                                 uint64
	format, types, stream, since, until, out string
	upcast                                   bool
}

// options are the export's options the flags give, checked.
func (fl exportFlags) options() (export.Options, error) {
	o := export.Options{After: fl.from, UpTo: fl.to}
	var err error
	if o.Format, err = export.ParseFormat(fl.format); err != nil {
		return o, fmt.Errorf("--format: %w", err)
	}
	if fl.to != 0 && fl.to <= fl.from {
		return o, fmt.Errorf("--to (%d) must be greater than --from (%d)", fl.to, fl.from)
	}
	reg := catalog.Registry()
	for _, t := range strings.Split(fl.types, ",") {
		if t = strings.TrimSpace(t); t == "" {
			continue
		}
		if !reg.Known(t) {
			return o, fmt.Errorf("--types: %q is not an event type (`arr events types` lists them)", t)
		}
		o.Filter.Types = append(o.Filter.Types, t)
	}
	o.Filter.Stream = fl.stream
	if o.Filter.Since, err = parseWhen("--since", fl.since); err != nil {
		return o, err
	}
	if o.Filter.Until, err = parseWhen("--until", fl.until); err != nil {
		return o, err
	}
	if fl.upcast {
		o.Upcast = reg
	}
	return o, nil
}

func (a *cli) eventsExportCmd() *cobra.Command {
	var fl exportFlags
	c := &cobra.Command{
		Use:   "export [--format ndjson|parquet] [--types T1,T2] [--stream S] [--since TIME] [--until TIME] [--from POS] [--to POS] [--out FILE]",
		Short: "Write events as NDJSON or Parquet, to stdout or a file (progress on stderr)",
		Long: `Writes the events after --from up to --to (default: the head at start) that
match every filter given, in position order.

  ndjson   one event a line, as 'arr events tail --json' prints it
  parquet  columns position, event_id, stream, stream_version, type,
           schema_version, recorded_at (timestamp, UTC), data and metadata
           (JSON); zstd, row groups of 65536 events

Payloads are written as stored, at the schema version the schema_version
column names; --upcast writes each at its type's current version instead,
as handlers receive it ('arr events types' lists the versions). TIME is RFC
3339 (2026-11-22T10:00:00Z) or a UTC date (2026-11-22); --since is
inclusive, --until exclusive.

With --out FILE the export is written to a temporary file beside FILE
(.FILE.tmp-*), synced to disk and renamed over FILE at the end: FILE holds
its earlier content or the whole export, never part of one. A failed or
interrupted (Ctrl-C, SIGTERM) export removes the temporary file; a process
killed outright (kill -9) leaves it, and it can be deleted. Without --out
the export streams to stdout.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o, err := fl.options()
			if err != nil {
				return err
			}
			var w io.Writer = cmd.OutOrStdout()
			if fl.out == "" && o.Format == export.Parquet {
				if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
					return errors.New("--format parquet: stdout is a terminal; write to a file with --out FILE or redirect")
				}
			}
			s, err := a.open(cmd, openOptions{})
			if err != nil {
				return err
			}
			defer s.Close()
			p := newProgress(os.Stderr, "export")
			o.Progress = p.Set
			var res export.Result
			if fl.out != "" {
				res, err = export.WriteFile(cmd.Context(), s.store, fl.out, o)
			} else {
				res, err = export.Write(cmd.Context(), s.store, w, o)
			}
			if err != nil {
				return err
			}
			p.done = res.Events
			p.Finish()
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&fl.format, "format", "ndjson", "output format: ndjson or parquet")
	f.Uint64Var(&fl.from, "from", 0, "export events after this position")
	f.Uint64Var(&fl.to, "to", 0, "export up to and including this position (default: the head at start)")
	f.StringVar(&fl.types, "types", "", "only these event types, comma-separated")
	f.StringVar(&fl.stream, "stream", "", "only this stream's events")
	f.StringVar(&fl.since, "since", "", "only events recorded at or after TIME (RFC 3339 or YYYY-MM-DD, UTC)")
	f.StringVar(&fl.until, "until", "", "only events recorded before TIME (RFC 3339 or YYYY-MM-DD, UTC)")
	f.StringVar(&fl.out, "out", "", "write to FILE instead of stdout, atomically: FILE is replaced only once the export is complete and on disk")
	f.BoolVar(&fl.upcast, "upcast", false, "write payloads at their type's current schema version, as handlers receive them")
	return c
}

// parseWhen reads an RFC 3339 time or a UTC date; "" is no bound.
func parseWhen(flag, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%s %q: want RFC 3339 (2026-11-22T10:00:00Z) or a date (2026-11-22)", flag, s)
}
