package commands

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/arr-dev/arr/adapters/demodata"
	"github.com/arr-dev/arr/adapters/layerfile"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/records"
	"github.com/arr-dev/arr/eventstore"
)

// LoadDemo loads the public-record demo data arr ships (adapters/demodata)
// that is not in the log yet: each demo load has a fixed id, so a load
// whose stream exists is skipped, and one another process is loading at
// the same time is left to it. start is called once, before the first
// load (nil: nothing to say); progress gets the rows loaded so far.
func (h *LoadLayerHandler) LoadDemo(ctx context.Context, start func(), progress func(rows uint64)) error {
	loads, err := demodata.Loads()
	if err != nil {
		return err
	}
	var rows uint64
	started := false
	for _, l := range loads {
		evs, err := h.store.ReadStream(ctx, records.LoadStreamID(l.LoadID()), eventstore.ReadStreamOptions{Limit: 1})
		if err != nil {
			return fmt.Errorf("demo load %s: %w", l.ID, err)
		}
		if len(evs) > 0 {
			continue
		}
		if !started && start != nil {
			start()
		}
		started = true
		n, err := h.loadDemoOne(ctx, l, func(n int) {
			if progress != nil {
				progress(rows + uint64(n))
			}
		})
		if err != nil {
			return fmt.Errorf("demo load %s: %w", l.ID, err)
		}
		rows += uint64(n)
	}
	return nil
}

func (h *LoadLayerHandler) loadDemoOne(ctx context.Context, l demodata.Load, progress func(int)) (int, error) {
	mb, err := demodata.ReadFile(l.Mapping)
	if err != nil {
		return 0, err
	}
	m, err := layerfile.ParseMapping(mb)
	if err != nil {
		return 0, err
	}
	f, err := demodata.Open(l.File)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	src, err := layerfile.NewReader(f.(io.Reader), layerfile.Options{Name: l.File, County: l.County, Mapping: &m})
	if err != nil {
		return 0, err
	}
	crawled, err := time.Parse(time.DateOnly, l.SourceDate)
	if err != nil {
		return 0, fmt.Errorf("source date %q: %w", l.SourceDate, err)
	}
	done := 0
	_, err = h.Handle(ctx, LoadLayer{LoadID: l.LoadID(), Layer: records.Layer(l.Layer), Counties: []string{l.County},
		SourceURL: l.SourceURL, SourceDate: l.SourceDate, File: l.File, CrawledAt: crawled,
		Progress: func(n int) { done = n; progress(n) }}, src)
	if errors.Is(err, domain.ErrConflict) { // another process loaded it meanwhile
		return done, nil
	}
	return done, err
}
