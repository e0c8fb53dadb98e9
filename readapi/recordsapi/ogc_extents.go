package recordsapi

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/arr-dev/arr/projections"
	"github.com/arr-dev/arr/projections/parcels"
	"github.com/arr-dev/arr/readapi/app"
)

// extentsScanTimeout is the statement timeout of one scan of the
// collections' extents (the collections' routes' own, limits.go).
const extentsScanTimeout = 10 * time.Second

// extentCache holds the collections' extents of one version of the read
// model (parcels.ReadModelVersion: a load that completes or fails, or a
// rebuild, makes a new one). When the version moves on, one scan refreshes
// them for every request (singleflight), under its own statement timeout
// and apart from any request's context, while the requests are served the
// extents last known (stale while revalidating); only the first requests,
// with none known yet, wait for it, each within its own deadline. Safe
// for concurrent use.
type extentCache struct {
	features app.Features
	log      *slog.Logger
	flight   singleflight.Group

	mu      sync.Mutex
	version parcels.ReadModelVersion
	extents map[string]parcels.Extent // nil until a scan has succeeded
}

func newExtentCache(f app.Features, log *slog.Logger) *extentCache {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &extentCache{features: f, log: log}
}

// get returns the extents of the read model's version now, or, while a
// scan of it runs, the last ones known.
func (c *extentCache) get(ctx context.Context) (map[string]parcels.Extent, error) {
	v, err := c.features.ExtentsVersion(ctx)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	known, ex := c.version, c.extents
	c.mu.Unlock()
	if ex != nil && known == v {
		return ex, nil
	}
	done := c.flight.DoChan("extents", func() (any, error) { return c.refresh(context.WithoutCancel(ctx)) })
	if ex != nil {
		return ex, nil
	}
	select {
	case r := <-done:
		if r.Err != nil {
			return nil, r.Err
		}
		return r.Val.(map[string]parcels.Extent), nil
	case <-ctx.Done():
		d, _ := projections.StatementTimeoutOf(ctx)
		return nil, fmt.Errorf("waiting for the collections' extents: %w", projections.QueryTimeout(d))
	}
}

// refresh scans the extents of the read model's version now and keeps
// them; ctx carries the values of the request that started it, not its
// deadline.
func (c *extentCache) refresh(ctx context.Context) (any, error) {
	ctx, cancel := projections.WithStatementTimeout(ctx, extentsScanTimeout)
	defer cancel()
	v, err := c.features.ExtentsVersion(ctx)
	if err == nil {
		var ex map[string]parcels.Extent
		if ex, err = c.features.Extents(ctx); err == nil {
			c.mu.Lock()
			c.version, c.extents = v, ex
			c.mu.Unlock()
			return ex, nil
		}
	}
	c.log.Warn("OGC API: refreshing the collections' extents failed; the last ones known are served", "err", err)
	return nil, err
}
