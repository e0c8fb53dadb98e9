package export

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/eventstore"
)

// Format is an export's file format.
type Format string

// The formats Write knows.
const (
	NDJSON  Format = "ndjson"
	Parquet Format = "parquet"
)

// ParseFormat checks a format's name.
func ParseFormat(s string) (Format, error) {
	switch f := Format(s); f {
	case NDJSON, Parquet:
		return f, nil
	}
	return "", fmt.Errorf("format %q: want ndjson or parquet", s)
}

// Options says what to export and how.
type Options struct {
	Format Format
	// After exports events after this position (exclusive).
	After uint64
	// UpTo exports events up to this position (inclusive); 0 is the
	// log's head when the export starts.
	UpTo uint64
	// Filter keeps the events it matches.
	Filter eventstore.Filter
	// Upcast, if set, writes each payload at its type's current schema
	// version (the registry's upcasters; schema_version says the
	// current version then) instead of as stored. Events of types it
	// does not know are written as stored.
	Upcast *domain.Registry
	// Batch is the events read per query; default 5000.
	Batch int
	// RowGroup is the rows per Parquet row group; default 65536.
	RowGroup int
	// Progress, if set, is told after each batch how far the export is
	// through the position range: done of total positions.
	Progress func(done, total uint64)
}

// Result says what an export wrote.
type Result struct {
	// Events is how many events were written.
	Events uint64 `json:"events"`
	// After and UpTo are the position range read.
	After uint64 `json:"after"`
	UpTo  uint64 `json:"up_to"`
	// First and Last are the positions of the first and last events
	// written (0 when none).
	First uint64 `json:"first"`
	Last  uint64 `json:"last"`
}

// encoder writes events in one format.
type encoder interface {
	write(evs []eventstore.Event) error
	close() error
}

// Write exports the events o selects from store to w, in position order.
// w is written to only (never sought), so it may be a pipe.
func Write(ctx context.Context, store eventstore.Store, w io.Writer, o Options) (Result, error) {
	if o.Batch <= 0 {
		o.Batch = 5000
	}
	if o.RowGroup <= 0 {
		o.RowGroup = 65536
	}
	if !o.Filter.Since.IsZero() && !o.Filter.Until.IsZero() && !o.Filter.Until.After(o.Filter.Since) {
		return Result{}, fmt.Errorf("the time range [%s, %s) is empty", o.Filter.Since.Format(time.RFC3339), o.Filter.Until.Format(time.RFC3339))
	}
	res := Result{After: o.After, UpTo: o.UpTo}
	if res.UpTo == 0 {
		head, err := store.Head(ctx)
		if err != nil {
			return res, fmt.Errorf("export: reading the log's head: %w", err)
		}
		res.UpTo = head
	}
	var enc encoder
	switch o.Format {
	case NDJSON, "":
		enc = newNDJSON(w)
	case Parquet:
		enc = newParquet(w, o.RowGroup)
	default:
		return res, fmt.Errorf("export: format %q: want ndjson or parquet", o.Format)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := make(chan []eventstore.Event, 2)
	readErr := make(chan error, 1)
	go func() {
		defer close(batches)
		readErr <- read(ctx, store, o, res.UpTo, batches)
	}()
	for evs := range batches {
		if o.Upcast != nil {
			if err := upcast(o.Upcast, evs); err != nil {
				cancel()
				return res, err
			}
		}
		if err := enc.write(evs); err != nil {
			cancel()
			return res, fmt.Errorf("export: writing: %w", err)
		}
		if res.First == 0 {
			res.First = evs[0].Position
		}
		res.Last = evs[len(evs)-1].Position
		res.Events += uint64(len(evs))
		if o.Progress != nil {
			o.Progress(res.Last-min(res.Last, o.After), res.UpTo-min(res.UpTo, o.After))
		}
	}
	if err := <-readErr; err != nil {
		return res, err
	}
	if err := enc.close(); err != nil {
		return res, fmt.Errorf("export: finishing the file: %w", err)
	}
	if o.Progress != nil {
		o.Progress(res.UpTo-min(res.UpTo, o.After), res.UpTo-min(res.UpTo, o.After))
	}
	return res, nil
}

// read sends the selected events in (o.After, upTo] to out in batches: by
// the store's filtered query when it has one, else by ReadAll and
// Filter.Match.
func read(ctx context.Context, store eventstore.Store, o Options, upTo uint64, out chan<- []eventstore.Event) error {
	fr, filtered := store.(eventstore.FilterReader)
	for after := o.After; after < upTo; {
		var evs []eventstore.Event
		var err error
		full := false
		if filtered {
			evs, err = fr.ReadFiltered(ctx, after, upTo, o.Batch, o.Filter)
			full = len(evs) == o.Batch
		} else {
			var all []eventstore.Event
			all, err = store.ReadAll(ctx, after, o.Batch)
			full = len(all) == o.Batch
			for _, e := range all {
				after = e.Position
				if e.Position > upTo {
					full = false
					break
				}
				if o.Filter.Match(e) {
					evs = append(evs, e)
				}
			}
		}
		if err != nil {
			return fmt.Errorf("export: reading the log after %d: %w", after, err)
		}
		if len(evs) > 0 {
			after = evs[len(evs)-1].Position
			select {
			case out <- evs:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if !full {
			return nil
		}
	}
	return nil
}

// upcast rewrites each payload of an older schema version as its type's
// current version.
func upcast(reg *domain.Registry, evs []eventstore.Event) error {
	for i := range evs {
		e := &evs[i]
		proto := reg.New(e.Type)
		if proto == nil || e.SchemaVersion >= proto.SchemaVersion() {
			continue
		}
		u, ok := proto.(domain.Upcaster)
		if !ok {
			return fmt.Errorf("export: %s v%d: the type does not upcast", e.Type, e.SchemaVersion)
		}
		data, err := u.Upcast(e.SchemaVersion, e.Data)
		if err != nil {
			return fmt.Errorf("export: upcasting %s v%d at position %d: %w", e.Type, e.SchemaVersion, e.Position, err)
		}
		e.Data, e.SchemaVersion = data, proto.SchemaVersion()
	}
	return nil
}

var errClosed = errors.New("export: encoder closed")
