package main

import (
	"context"
	"encoding/csv"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/arr-dev/arr/projections/identity"
	"github.com/arr-dev/arr/projections/lists"
	"github.com/arr-dev/arr/projections/parcels"

	"github.com/spf13/cobra"

	"github.com/arr-dev/arr/adapters/layerfile"
	"github.com/arr-dev/arr/adapters/listfile"
	"github.com/arr-dev/arr/adapters/safecsv"
	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/domain/date"
	"github.com/arr-dev/arr/domain/records"
)

func (a *cli) loadCmd() *cobra.Command {
	c := &cobra.Command{Use: "load", Short: "Load public-record data"}
	var layer, county, sourceURL, sourceDate, mapping, rejectsPath, crawled string
	var chunk int
	var asJSON, wait bool
	lc := &cobra.Command{
		Use:   "layer --layer KEY --county FIPS --source-url URL --source-date YYYY-MM-DD FILE [--mapping FILE]",
		Short: "Load a layer from a CSV or GeoJSON file (optionally .gz) through a column mapping",
		Long: "Load a layer from a CSV or GeoJSON file through a column mapping (see demodata/files/*.mapping.json).\n" +
			"Appends LayerLoadStarted, the rows in bulk chunks (LayerRowsLoaded) and LayerLoadCompleted, or LayerLoadFailed.\n" +
			"Rows that cannot be used are skipped into the rejects report with their line numbers. Layers: " + strings.Join(records.LayerKeys(), ", ") + ".",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			counties := strings.Split(county, ",")
			src, err := openLayerFile(args[0], counties, mapping)
			if err != nil {
				return err
			}
			defer src.Close()
			s, err := a.open(cmd, openOptions{setup: true})
			if err != nil {
				return err
			}
			defer s.Close()
			rc := s.app.Commands
			var crawledAt time.Time
			if crawled != "" {
				if crawledAt, err = date.Instant("crawled_at", crawled); err != nil {
					return err
				}
			}
			bar := newProgressOf(os.Stderr, "loading "+layer, "rows")
			res, err := rc.LoadLayer.Handle(cmd.Context(), commands.LoadLayer{Layer: records.Layer(layer), Counties: counties, SourceURL: sourceURL,
				SourceDate: sourceDate, File: filepath.Base(args[0]), CrawledAt: crawledAt, ChunkRows: chunk, Metadata: cliMetadata(cmd),
				Progress: func(n int) { bar.Set(uint64(n), uint64(n)) }}, src)
			bar.Finish()
			if rerr := writeRejects(rejectsPath, res.Rejects); rerr != nil && err == nil {
				err = rerr
			}
			if err != nil {
				return err
			}
			if wait {
				if err := s.waitForLoad(cmd.Context(), parcels.Name); err != nil {
					return err
				}
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), map[string]any{"load": res, "rejects": res.Rejects, "rejects_file": rejectsPath})
			}
			printLoad(cmd, res, rejectsPath)
			return nil
		},
	}
	f := lc.Flags()
	f.StringVar(&layer, "layer", "", "layer key: "+strings.Join(records.LayerKeys(), ", "))
	f.StringVar(&county, "county", "", "5-digit county FIPS code(s) the load covers, comma-separated (24510 is Baltimore City)")
	f.StringVar(&sourceURL, "source-url", "", "URL of the public source")
	f.StringVar(&sourceDate, "source-date", "", "date the source data describes, YYYY-MM-DD")
	f.StringVar(&mapping, "mapping", "", "column mapping (JSON); default: columns named apn, address, lat, lon, county, source_url, date, amount, lender")
	f.StringVar(&rejectsPath, "rejects", "", "write the rejects report (CSV: line,reason) here; default: print it to stderr")
	f.StringVar(&crawled, "crawled-at", "", "when the source was fetched (RFC 3339); default now")
	f.IntVar(&chunk, "chunk-rows", 5000, "rows per LayerRowsLoaded event")
	f.BoolVar(&asJSON, "json", false, "print JSON")
	f.BoolVar(&wait, "wait", false, "wait, as long as it takes (^C stops waiting, not the load), until the parcels read model has applied the load, showing its progress")
	for _, r := range []string{"layer", "county", "source-url", "source-date"} {
		_ = lc.MarkFlagRequired(r)
	}
	c.AddCommand(lc)
	return c
}

// openLayerFile opens a layer file for a load of counties, through the
// column mapping in file mapping ("": the default columns).
func openLayerFile(path string, counties []string, mapping string) (*layerfile.Reader, error) {
	var m *layerfile.Mapping
	if mapping != "" {
		mm, err := layerfile.LoadMapping(mapping)
		if err != nil {
			return nil, err
		}
		m = &mm
	}
	one := ""
	if len(counties) == 1 {
		one = counties[0]
	}
	return layerfile.Open(path, layerfile.Options{County: one, Mapping: m})
}

// printLoad says what a load did, and its rejected rows unless they went
// to a rejects file.
func printLoad(cmd *cobra.Command, res commands.LoadResult, rejectsPath string) {
	fmt.Fprintf(cmd.OutOrStdout(), "load %s of layer %s: %d rows read, %d loaded in %d chunks, %d skipped by the mapping, %d rejected\n",
		res.LoadID, res.Layer, res.RowsRead, res.RowsLoaded, res.Chunks, res.RowsSkipped, res.RowsRejected)
	if len(res.Rejects) > 0 && rejectsPath == "" {
		fmt.Fprintln(cmd.ErrOrStderr(), "rejected rows (line: reason):")
		for _, r := range res.Rejects {
			fmt.Fprintf(cmd.ErrOrStderr(), "  %d: %s\n", r.Line, r.Reason)
		}
	}
}

func writeRejects(path string, rejects []records.Reject) error {
	if path == "" {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("rejects report: %w", err)
	}
	w := csv.NewWriter(f)
	_ = w.Write([]string{"line", "reason"})
	for _, r := range rejects {
		_ = w.Write([]string{strconv.Itoa(r.Line), safecsv.Text(r.Reason)}) // a reason quotes the file's cells
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func (a *cli) importCmd() *cobra.Command {
	c := &cobra.Command{Use: "import", Short: "Import an account's data"}
	var email, name, mapping string
	var asJSON bool
	lc := &cobra.Command{
		Use:   "list --email E FILE [--mapping FILE]",
		Short: "Import a CSV list (apn and/or property address, unit, city, state, zip, county, phone, email) into an account's records lists",
		Long: "Import a CSV list as list builders (PropStream, DealMachine, BatchData, REISift) and county assessor exports write them.\n" +
			"Columns are found by the header table (docs/lists.md) or by --mapping, a JSON object naming the header of each of\n" +
			"apn, county, address, unit, city, state, zip, phone, email, and mailing (a list: the owner's mailing address, never matched).\n" +
			"It prints how many rows matched a parcel, how many are ambiguous and how many found none.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			l, err := readListFile(args[0], mapping)
			if err != nil {
				return err
			}
			s, err := a.open(cmd, openOptions{catchUp: []string{identity.Name}, contactKeys: true})
			if err != nil {
				return err
			}
			defer s.Close()
			addr, err := account.NormalizeEmail(email)
			if err != nil {
				return err
			}
			acct, err := s.app.Queries.Identities.AccountByEmail(cmd.Context(), addr)
			if err != nil {
				return err
			}
			rc := s.app.Commands
			if name == "" {
				name = filepath.Base(args[0])
			}
			res, err := rc.ImportList.Handle(cmd.Context(), commands.ImportList{AccountID: acct.ID, Name: name, List: l, Metadata: cliMetadata(cmd)})
			if err != nil {
				return err
			}
			if err := s.waitFor(cmd.Context(), lists.Name, res.Position); err != nil {
				return err
			}
			sum, err := s.app.Queries.Lists.Summary(cmd.Context(), acct.ID, res.ListID)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), struct {
					commands.ImportedList
					Match lists.MatchSummary `json:"match"`
				}{res, sum})
			}
			fmt.Fprintf(cmd.OutOrStdout(), "list %s (%q) imported into %s: %d rows\n", res.ListID, res.Name, acct.Email, res.Rows)
			fmt.Fprintf(cmd.OutOrStdout(), "matched %d (%d by APN, %d by address), ambiguous %d, no parcel %d%s\n",
				sum.Matched, sum.ByAPN, sum.ByAddress, sum.Ambiguous, sum.Unmatched, reasons(sum.Reasons))
			return nil
		},
	}
	lc.Flags().StringVar(&email, "email", "", "the account's e-mail address (required)")
	lc.Flags().StringVar(&name, "name", "", "the list's name; default the file's name")
	lc.Flags().StringVar(&mapping, "mapping", "", "column mapping (JSON); default: the header table of docs/lists.md")
	lc.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	_ = lc.MarkFlagRequired("email")
	c.AddCommand(lc)
	return c
}

// readListFile parses the list file at path, its columns found by the
// mapping file at mapping when one is named, else by the header table.
func readListFile(path, mapping string) (listfile.List, error) {
	var m *listfile.Mapping
	if mapping != "" {
		mf, err := os.Open(mapping)
		if err != nil {
			return listfile.List{}, err
		}
		mm, err := listfile.ReadMapping(mf)
		mf.Close()
		if err != nil {
			return listfile.List{}, fmt.Errorf("%s: %w", mapping, err)
		}
		m = &mm
	}
	f, err := os.Open(path)
	if err != nil {
		return listfile.List{}, err
	}
	defer f.Close()
	l, err := listfile.ParseWith(f, m)
	if err != nil {
		return listfile.List{}, fmt.Errorf("%s: %w", path, err)
	}
	return l, nil
}

// reasons prints unmatched rows' reasons: " (no_parcel_at_address 3, apn_not_found 1)".
func reasons(r map[string]int) string {
	if len(r) == 0 {
		return ""
	}
	keys := make([]string, 0, len(r))
	for k := range r {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, r[k])
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// accountsEraseCmd is `arr accounts erase-contact-data`: crypto-shredding of
// an account's records contact data.
func (a *cli) accountsEraseCmd() *cobra.Command {
	var email string
	var asJSON bool
	c := &cobra.Command{
		Use:   "erase-contact-data --email E",
		Short: "Erase an account's records contact data: destroy its data key (crypto-shredding), then drop the sealed columns from read models",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := a.open(cmd, openOptions{catchUp: []string{identity.Name}, contactKeys: true})
			if err != nil {
				return err
			}
			defer s.Close()
			addr, err := account.NormalizeEmail(email)
			if err != nil {
				return err
			}
			acct, err := s.app.Queries.Identities.AccountByEmail(cmd.Context(), addr)
			if err != nil {
				return err
			}
			rc := s.app.Commands
			pos, err := rc.EraseContactData.Handle(cmd.Context(), commands.EraseContactData{AccountID: acct.ID, Metadata: cliMetadata(cmd)})
			if err != nil {
				return err
			}
			if err := s.waitFor(cmd.Context(), lists.Name, pos); err != nil {
				return err
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), map[string]any{"account_id": acct.ID, "erased": true, "position": pos})
			}
			fmt.Fprintf(cmd.OutOrStdout(), "contact data of %s erased: its data key is destroyed\n", acct.Email)
			return nil
		},
	}
	c.Flags().StringVar(&email, "email", "", "the account's e-mail address (required)")
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	_ = c.MarkFlagRequired("email")
	return c
}

// loadDemo loads the shipped demo data that is not in the log yet
// (commands.LoadLayerHandler.LoadDemo), with a progress bar.
func loadDemo(ctx context.Context, s *system, log *slog.Logger) error {
	var bar *progress
	err := s.app.Commands.LoadLayer.LoadDemo(ctx, func() {
		log.Info("first start: loading the shipped public-record demo data (ARR_DEMO_DATA=false turns this off)")
		bar = newProgressOf(os.Stderr, "demo data", "rows")
	}, func(rows uint64) { bar.Set(rows, rows) })
	if bar != nil {
		bar.Finish()
	}
	return err
}

// waitForLoad waits until projection has applied the log up to its
// current head, for as long as that takes (a large load's publishing is
// one transaction of minutes, which ARR_READ_YOUR_WRITES_TIMEOUT, a bound
// for requests, must not cut short), showing the events applied. Only
// ctx's end (^C) stops it; the load itself is in the log either way.
func (s *system) waitForLoad(ctx context.Context, projection string) error {
	head, err := s.store.Head(ctx)
	if err != nil {
		return err
	}
	at := func() uint64 {
		cps, err := s.app.Queries.Status.Checkpoints(ctx)
		if err != nil {
			return 0
		}
		for _, c := range cps {
			if c.Name == projection {
				return uint64(max(c.Position, 0))
			}
		}
		return 0
	}
	from := at()
	bar := newProgressOf(os.Stderr, "waiting for "+projection, "events")
	done := make(chan error, 1)
	go func() { done <- s.runner.WaitFor(ctx, projection, head) }()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			bar.Finish()
			if err != nil {
				return fmt.Errorf("the load is in the log, but %s has not applied it yet: %w", projection, err)
			}
			// Applied; the replica too, when reads go to one (bounded).
			return s.waitFor(ctx, projection, head)
		case <-tick.C:
			if cur := at(); cur > from {
				bar.Set(cur-from, head-from)
			} else {
				bar.Set(0, head-from)
			}
		}
	}
}
