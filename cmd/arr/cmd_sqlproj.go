package main

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/arr-dev/arr/adapters/safecsv"
	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/projections"
	"github.com/arr-dev/arr/projections/sqlproj"
)

// sqlProjectionCmds are `arr projections create|drop|query`: analysts'
// read models written in SQL (docs/sql-projections.md).
func (a *cli) sqlProjectionCmds() []*cobra.Command {
	return []*cobra.Command{a.sqlCreateCmd(), a.sqlDropCmd(), a.sqlQueryCmd()}
}

// sqlCreateCmd is `arr projections create FILE`.
func (a *cli) sqlCreateCmd() *cobra.Command {
	var by string
	var asJSON bool
	create := &cobra.Command{
		Use:   "create FILE",
		Short: "Define a SQL projection from a file, build it from the whole log, and have arr keep it up to date",
		Long: "Define a SQL projection from a file (see docs/sql-projections.md): the file is checked (a clear error names the\n" +
			"statement and line of bad SQL or an unknown event type, and nothing changes), the definition is recorded as a\n" +
			"SQLProjectionDefined event, the read model is built from the whole log, and every running `arr up` or\n" +
			"`arr serve projections` keeps it up to date from then on.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			by, err := who(by)
			if err != nil {
				return err
			}
			return a.createSQLProjection(cmd, args[0], by, asJSON)
		},
	}
	create.Flags().StringVar(&by, "by", "", "who defines it (default: the operating-system user)")
	create.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return create
}

// sqlDropCmd is `arr projections drop NAME`.
func (a *cli) sqlDropCmd() *cobra.Command {
	var dropBy string
	drop := &cobra.Command{
		Use:   "drop NAME",
		Short: "Drop a SQL projection: record it, stop keeping it, and remove its read model and role",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			by, err := who(dropBy)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			s, err := a.open(cmd, openOptions{setup: true})
			if err != nil {
				return err
			}
			defer s.Close()
			if p, err := s.runner.Get(name); err == nil {
				if !sqlproj.IsSQL(p) {
					return fmt.Errorf("%s is a built-in projection, not a SQL projection", name)
				}
			}
			pos, err := s.app.Commands.DropSQLProjection.Handle(ctx, commands.DropSQLProjection{Name: name, DroppedBy: by, Metadata: commands.NewMetadata("cli:"+by, "")})
			if err != nil {
				return err
			}
			if err := s.waitFor(ctx, sqlproj.DefinitionsName, pos); err != nil {
				return err
			}
			s.runner.Remove(name)
			if _, err := s.sql.Drop(ctx, name); err != nil {
				return fmt.Errorf("%s is dropped (event %d), but removing its read model failed (a running arr removes it too): %w", name, pos, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s dropped by %s (event %d): its read model and role are gone\n", name, by, pos)
			return nil
		},
	}
	drop.Flags().StringVar(&dropBy, "by", "", "who drops it (default: the operating-system user)")
	return drop
}

// sqlQueryCmd is `arr projections query NAME SQL`.
func (a *cli) sqlQueryCmd() *cobra.Command {
	var format string
	var maxRows int64
	query := &cobra.Command{
		Use:   `query NAME "SELECT ..."`,
		Short: "Query a SQL projection's read model, read-only, as its role (its schema is the search path)",
		Long: "Query a SQL projection's read model, read-only, as its role (its schema is the search path). Rows are printed\n" +
			"as PostgreSQL returns them (csv and json stream; table waits for the last row to align the columns), at most\n" +
			"--max-rows of them: PostgreSQL stops there, and arr says so on stderr.",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch format {
			case "table", "json", "csv":
			default:
				return fmt.Errorf("--format %q: use table, json or csv", format)
			}
			if maxRows < 0 {
				return fmt.Errorf("--max-rows %d: use a positive number, or 0 for no cap", maxRows)
			}
			s, err := a.open(cmd, openOptions{})
			if err != nil {
				return err
			}
			defer s.Close()
			p, err := s.runner.Get(args[0])
			if err != nil {
				return err
			}
			if !sqlproj.IsSQL(p) {
				return fmt.Errorf("%s is a built-in projection; query accepts SQL projections", args[0])
			}
			out := newResultWriter(cmd.OutOrStdout(), format)
			truncated, err := s.sql.Stream(cmd.Context(), args[0], args[1], maxRows, out.row)
			if err != nil {
				return err
			}
			if err := out.close(); err != nil {
				return err
			}
			if truncated {
				fmt.Fprintf(cmd.ErrOrStderr(), "arr: the query has more than %d rows; printed the first %d (--max-rows N for more, 0 for all)\n", maxRows, maxRows)
			}
			return nil
		},
	}
	query.Flags().StringVar(&format, "format", "table", "table, json (an array of objects) or csv")
	query.Flags().Int64Var(&maxRows, "max-rows", 100000, "print at most this many rows (0: all)")
	return query
}

// createSQLProjection checks and records the definition in file, waits
// until this process has it, builds it from the whole log and says what
// it did.
func (a *cli) createSQLProjection(cmd *cobra.Command, file, by string, asJSON bool) error {
	raw, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	src := strings.ReplaceAll(string(raw), "\r\n", "\n")
	ctx := cmd.Context()
	s, err := a.open(cmd, openOptions{setup: true})
	if err != nil {
		return err
	}
	defer s.Close()
	// Running arr processes leave the projection to this build
	// until it is done (they follow it from where it ends).
	if name, err := s.sql.DefinitionName(file, src); err == nil {
		release, err := s.sql.Building(ctx, name)
		if err != nil {
			return err
		}
		defer release()
	}
	name, pos, err := s.app.Commands.DefineSQLProjection.Handle(ctx, commands.DefineSQLProjection{File: file, SQL: src, DefinedBy: by, Metadata: commands.NewMetadata("cli:"+by, "")})
	if err != nil {
		return err
	}
	if err := s.waitFor(ctx, sqlproj.DefinitionsName, pos); err != nil {
		return err
	}
	if _, err := s.sql.Sync(ctx, s.runner, true); err != nil {
		if _, gerr := s.runner.Get(name); gerr != nil {
			return fmt.Errorf("%s is defined (event %d) but could not be set up: %w", name, pos, err)
		}
	}
	start := time.Now()
	p := newProgress(os.Stderr, "build "+name)
	if err := s.runner.Replay(ctx, name, 0, p.Set); err != nil {
		return fmt.Errorf("%s is defined (event %d) but building it failed (arr retries; arr projections drop %s removes it): %w", name, pos, name, err)
	}
	p.Finish()
	parked, err := projections.CountParked(ctx, s.pool, name)
	if err != nil {
		return err
	}
	head, err := s.store.Head(ctx)
	if err != nil {
		return err
	}
	if asJSON {
		return printJSON(cmd.OutOrStdout(), map[string]any{"name": name, "schema": projections.Schema(name), "position": pos,
			"defined_by": by, "built_to": head, "parked": parked, "took_seconds": time.Since(start).Seconds()})
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s defined by %s (event %d); built from the log up to %d in %s into schema %s", name, by, pos, head,
		time.Since(start).Round(time.Millisecond), projections.Schema(name))
	if parked > 0 {
		fmt.Fprintf(cmd.OutOrStdout(), "; %d event(s) could not be applied and are parked (arr projections parked %s)", parked, name)
	}
	fmt.Fprintln(cmd.OutOrStdout())
	return nil
}

// who is by, or the operating-system user.
func who(by string) (string, error) {
	if by = strings.TrimSpace(by); by != "" {
		return by, nil
	}
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username, nil
	}
	if u := os.Getenv("USER"); u != "" {
		return u, nil
	}
	return "", errors.New("cannot tell who you are: pass --by NAME")
}

// resultWriter prints a query's rows in a format as they come: csv and
// json as each row arrives, table (which aligns columns) at close.
type resultWriter struct {
	w      *bufio.Writer
	format string
	cols   []string
	rows   [][]json.RawMessage // table only
	csv    *csv.Writer
	n      int
}

func newResultWriter(w io.Writer, format string) *resultWriter {
	bw := bufio.NewWriter(w)
	return &resultWriter{w: bw, format: format, csv: csv.NewWriter(bw)}
}

func (r *resultWriter) row(cols []string, vals []json.RawMessage) error {
	r.cols = cols
	r.n++
	switch r.format {
	case "table":
		r.rows = append(r.rows, vals)
		return nil
	case "csv":
		if r.n == 1 {
			if err := r.csv.Write(safecsv.Row(cols)); err != nil {
				return err
			}
		}
		rec := make([]string, len(vals))
		for i, v := range vals {
			rec[i] = sqlproj.Text(v)
			if len(v) > 0 && v[0] == '"' { // a text value from events someone else wrote; numbers stay numbers
				rec[i] = safecsv.Text(rec[i])
			}
		}
		return r.csv.Write(rec)
	}
	sep := ",\n"
	if r.n == 1 {
		sep = "[\n"
	}
	r.w.WriteString(sep)
	_, err := r.w.Write(object(cols, vals))
	return err
}

// close prints what is left: the table, or the end of the JSON array.
func (r *resultWriter) close() error {
	switch r.format {
	case "csv":
		r.csv.Flush()
		if err := r.csv.Error(); err != nil {
			return err
		}
	case "json":
		if r.n == 0 {
			r.w.WriteString("[")
		} else {
			r.w.WriteString("\n")
		}
		r.w.WriteString("]\n")
	case "table":
		tw := tabwriter.NewWriter(r.w, 0, 4, 2, ' ', 0)
		if len(r.cols) > 0 {
			cols := make([]string, len(r.cols))
			for i, c := range r.cols {
				cols[i] = shown(strings.NewReplacer("\t", " ", "\n", " ").Replace(c))
			}
			fmt.Fprintln(tw, strings.Join(cols, "\t"))
		}
		for _, row := range r.rows {
			vals := make([]string, len(row))
			for i, v := range row {
				vals[i] = shown(strings.NewReplacer("\t", " ", "\n", " ").Replace(sqlproj.Text(v)))
			}
			fmt.Fprintln(tw, strings.Join(vals, "\t"))
		}
		fmt.Fprintf(tw, "(%d row%s)\n", len(r.rows), map[bool]string{true: "", false: "s"}[len(r.rows) == 1])
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return r.w.Flush()
}

// object is a row as a JSON object, columns in order (a repeated column
// name keeps its first value).
func object(cols []string, vals []json.RawMessage) []byte {
	res := sqlproj.Result{Columns: cols, Rows: [][]json.RawMessage{vals}}
	return res.Objects()[0]
}
