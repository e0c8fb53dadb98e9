package commands

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"encoding/json"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/adapters/layerfile"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/date"
	"github.com/arr-dev/arr/domain/records"
	"github.com/arr-dev/arr/domain/text"
	"github.com/arr-dev/arr/eventstore"
)

// RowSource yields a load's rows in chunks (layerfile.Reader is one).
type RowSource interface {
	// Next returns up to max accepted rows and the rows rejected on the
	// way; io.EOF at the end.
	Next(max int) ([]records.Row, []records.Reject, error)
	Stats() layerfile.Stats
}

// LoadLayer loads one layer's rows from one source file.
type LoadLayer struct {
	// LoadID is the load's id; zero picks a new one. A fixed id makes the
	// load idempotent: a second run finds it in the log (ErrConflict).
	LoadID     uuid.UUID
	Layer      records.Layer
	Counties   []string
	SourceURL  string
	SourceDate string
	File       string
	// CrawledAt is when the source was fetched; zero is now.
	CrawledAt time.Time
	// ChunkRows is the rows per LayerRowsLoaded event; default 5000.
	ChunkRows int
	Metadata  eventstore.Metadata
	// Progress, if set, is told the rows read so far.
	Progress func(rows int)
}

// LoadResult says what a load did.
type LoadResult struct {
	LoadID       uuid.UUID        `json:"load_id"`
	Layer        records.Layer    `json:"layer"`
	Position     uint64           `json:"position"`
	Chunks       int              `json:"chunks"`
	RowsRead     int              `json:"rows_read"`
	RowsLoaded   int              `json:"rows_loaded"`
	RowsSkipped  int              `json:"rows_skipped"`
	RowsRejected int              `json:"rows_rejected"`
	Rejects      []records.Reject `json:"-"`
}

// LoadLayerHandler handles LoadLayer: LayerLoadStarted, the rows in chunks
// of LayerRowsLoaded appended in bulk (COPY), then LayerLoadCompleted, or
// LayerLoadFailed when reading or appending fails midway. Read models apply
// a load's rows only on its completion, so a failed load changes nothing.
type LoadLayerHandler struct {
	store Appender
	clock Clock
}

// NewLoadLayerHandler refuses nil dependencies.
func NewLoadLayerHandler(store Appender, clock Clock) (*LoadLayerHandler, error) {
	if store == nil || clock == nil {
		return nil, errors.New("load layer: nil dependency")
	}
	return &LoadLayerHandler{store: store, clock: clock}, nil
}

// chunksPerAppend is how many chunk events go into one bulk append (one
// transaction).
const chunksPerAppend = 8

func (c *LoadLayer) validate() error {
	if _, err := records.ParseLayer(string(c.Layer)); err != nil {
		return err
	}
	if len(c.Counties) == 0 {
		return domain.Invalid("county_required", "county", "a load needs the county FIPS code(s) it covers")
	}
	for _, f := range c.Counties {
		if len(f) != 5 || strings.Trim(f, "0123456789") != "" {
			return domain.Invalid("invalid_county", "county", "county %q is not a 5-digit FIPS code (24510 is Baltimore City)", f)
		}
	}
	if !strings.HasPrefix(c.SourceURL, "https://") && !strings.HasPrefix(c.SourceURL, "http://") {
		return domain.Invalid("invalid_source_url", "source_url", "the source URL must be an http(s) URL, got %q", c.SourceURL)
	}
	if err := text.Check("source_url", c.SourceURL, 2000); err != nil {
		return err
	}
	if err := text.Check("file", c.File, 1000); err != nil {
		return err
	}
	if _, err := date.Day("source_date", c.SourceDate); err != nil {
		return err
	}
	return nil
}

// Handle runs the load. A load whose source fails midway is closed with
// LayerLoadFailed and returns the error.
func (h *LoadLayerHandler) Handle(ctx context.Context, c LoadLayer, src RowSource) (LoadResult, error) {
	if err := c.validate(); err != nil {
		return LoadResult{}, err
	}
	if c.ChunkRows <= 0 {
		c.ChunkRows = 5000
	}
	if c.LoadID == uuid.Nil {
		c.LoadID = uuid.New()
	}
	now := h.clock().UTC()
	if c.CrawledAt.IsZero() {
		c.CrawledAt = now
	}
	counties := slices.Clone(c.Counties)
	slices.Sort(counties)
	stream := records.LoadStreamID(c.LoadID)
	res := LoadResult{LoadID: c.LoadID, Layer: c.Layer}
	start, err := eventstore.Encode(&records.LayerLoadStarted{LoadID: c.LoadID, Layer: c.Layer, Counties: counties,
		SourceURL: c.SourceURL, SourceDate: c.SourceDate, File: c.File, CrawledAt: c.CrawledAt.UTC(), StartedAt: now}, c.Metadata)
	if err != nil {
		return res, err
	}
	if _, err := h.store.Append(ctx, stream, eventstore.NoStream(), start); err != nil {
		var wrong *eventstore.WrongExpectedVersionError
		if errors.As(err, &wrong) {
			return res, domain.Conflict("load_exists", "load %s is already in the log", c.LoadID)
		}
		return res, fmt.Errorf("starting load: %w", err)
	}
	version, rejects, err := h.appendRows(ctx, c, counties, src, &res)
	res.Rejects = rejects
	st := src.Stats()
	res.RowsRead, res.RowsSkipped, res.RowsRejected = st.Read, st.Skipped, len(rejects)
	if err != nil {
		failed, encErr := eventstore.Encode(&records.LayerLoadFailed{LoadID: c.LoadID, Layer: c.Layer, Reason: text.Clean(err.Error()), FailedAt: h.clock().UTC()}, c.Metadata)
		if encErr == nil {
			// Close the load even when ctx was cancelled (Ctrl-C).
			_, _ = h.store.Append(context.WithoutCancel(ctx), stream, eventstore.Any(), failed)
		}
		return res, fmt.Errorf("load %s failed after %d rows (nothing of it is applied): %w", c.LoadID, res.RowsLoaded, err)
	}
	inEvent := rejects
	if len(inEvent) > records.MaxRejectsInEvent {
		inEvent = inEvent[:records.MaxRejectsInEvent]
	}
	for i := range inEvent { // reasons may quote the file
		inEvent[i].Reason = text.Clean(inEvent[i].Reason)
	}
	done, err := eventstore.Encode(&records.LayerLoadCompleted{LoadID: c.LoadID, Layer: c.Layer, Counties: counties,
		CrawledAt: c.CrawledAt.UTC(), CompletedAt: h.clock().UTC(), Chunks: res.Chunks, RowsRead: res.RowsRead,
		RowsLoaded: res.RowsLoaded, RowsSkipped: res.RowsSkipped, RowsRejected: res.RowsRejected, Rejects: inEvent}, c.Metadata)
	if err != nil {
		return res, err
	}
	ar, err := h.store.Append(ctx, stream, eventstore.Exact(version), done)
	if err != nil {
		return res, fmt.Errorf("completing load: %w", err)
	}
	res.Position = ar.LastPosition
	return res, nil
}

type encodedChunk struct {
	ev   eventstore.NewEvent
	rows int
	err  error
}

// appendRows reads, encodes and appends the rows as a pipeline: the source
// is read and each chunk encoded while the previous chunks are copied into
// the log. It returns the stream's last version and the rejects.
func (h *LoadLayerHandler) appendRows(ctx context.Context, c LoadLayer, counties []string, src RowSource, res *LoadResult) (uint64, []records.Reject, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	chunks := make(chan encodedChunk, 2*chunksPerAppend)
	var rejects []records.Reject
	go func() {
		defer close(chunks)
		read := 0
		for n := 0; ; n++ {
			rows, rej, err := src.Next(c.ChunkRows)
			kept := rows[:0]
			for _, r := range rows {
				if !slices.Contains(counties, r.County) {
					rej = append(rej, records.Reject{Line: r.Line, Reason: fmt.Sprintf("county %s is not among the load's counties %v", r.County, counties)})
					continue
				}
				kept = append(kept, r)
			}
			rejects = append(rejects, rej...)
			read += len(rows) + len(rej)
			if c.Progress != nil {
				c.Progress(read)
			}
			if len(kept) > 0 {
				data, mErr := json.Marshal(&records.LayerRowsLoaded{LoadID: c.LoadID, Layer: c.Layer, Chunk: n, Rows: kept})
				ch := encodedChunk{rows: len(kept), err: mErr}
				if mErr == nil {
					ch.ev = eventstore.NewEvent{ID: uuid.New(), Type: records.LayerRowsLoaded{}.EventType(),
						SchemaVersion: records.LayerRowsLoaded{}.SchemaVersion(), Data: data, Metadata: c.Metadata}
				}
				select {
				case chunks <- ch:
				case <-ctx.Done():
					return
				}
			}
			if err == io.EOF {
				return
			}
			if err != nil {
				select {
				case chunks <- encodedChunk{err: fmt.Errorf("reading %s: %w", c.File, err)}:
				case <-ctx.Done():
				}
				return
			}
		}
	}()
	version := uint64(0)
	var batch []eventstore.NewEvent
	rowsInBatch := 0
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		r, err := h.store.AppendBulk(ctx, []eventstore.Append{{StreamID: records.LoadStreamID(c.LoadID), Expected: eventstore.Exact(version), Events: batch}})
		if err != nil {
			return fmt.Errorf("appending rows: %w", err)
		}
		version = r[0].LastVersion
		res.Chunks += len(batch)
		res.RowsLoaded += rowsInBatch
		batch, rowsInBatch = nil, 0
		return nil
	}
	for ch := range chunks {
		if ch.err != nil {
			cancel()
			for range chunks {
			}
			return version, rejects, ch.err
		}
		batch = append(batch, ch.ev)
		rowsInBatch += ch.rows
		if len(batch) >= chunksPerAppend {
			if err := flush(); err != nil {
				cancel()
				for range chunks {
				}
				return version, rejects, err
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return version, rejects, err
	}
	return version, rejects, flush()
}
