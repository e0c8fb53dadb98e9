package recordsapi

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/arr-dev/arr/projections"
	"github.com/arr-dev/arr/projections/parcels"
	"github.com/arr-dev/arr/readapi/app"
)

// extentsScanTimeout is the statement timeout of one scan of the
// collections' extents. It runs apart from every request (none waits for
// it longer than extentsFirstWait), so it has a budget of its own, longer
// than the collections' routes' 10 s: a read model too large to scan in a
// route's time still gets its extents.
const extentsScanTimeout = 60 * time.Second

// extentsFirstWait is how long a request waits for a scan when no extents
// are known yet (the process has just started, or every scan failed):
// past it, the request is answered without them (a collection without its
// extent, a page without numberMatched, both optional in OGC API –
// Features), never with a 503.
const extentsFirstWait = 2 * time.Second

// extentCache holds the collections' extents of one version of the read
// model (parcels.ReadModelVersion: a load that completes or fails, or a
// rebuild, makes a new one). When the version moves on, one scan refreshes
// them for every request (singleflight), under its own statement timeout
// and apart from any request's context, while the requests are served the
// extents last known (stale while revalidating); only the first requests,
// with none known yet, wait for it, at most extentsFirstWait each. Safe
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
// scan of it runs, the last ones known; nil when none is known yet and
// the first scan has not ended within extentsFirstWait (the caller
// answers without extents).
func (c *extentCache) get(ctx context.Context) (map[string]parcels.Extent, error) {
	v, err := c.features.ExtentsVersion(ctx)
	if err != nil {
		return nil, err
	}
	known, ex := c.known()
	if ex != nil && known == v {
		return ex, nil
	}
	done := c.refreshing(ctx)
	if ex != nil {
		return ex, nil
	}
	c.wait(ctx, done)
	_, ex = c.known()
	return ex, nil
}

// current returns the extents of the read model's version now, and
// whether they are of that version: the counts a page may report as its
// numberMatched. Stale extents are not (a load may have added or taken
// features since); it starts their refresh and reports false. A failure
// to read the version reports false too: the count is optional.
func (c *extentCache) current(ctx context.Context) (map[string]parcels.Extent, bool) {
	v, err := c.features.ExtentsVersion(ctx)
	if err != nil {
		return nil, false
	}
	known, ex := c.known()
	if ex != nil && known == v {
		return ex, true
	}
	done := c.refreshing(ctx)
	if ex == nil {
		c.wait(ctx, done)
		known, ex = c.known()
	}
	return ex, ex != nil && known == v
}

// known returns the extents last scanned and their version.
func (c *extentCache) known() (parcels.ReadModelVersion, map[string]parcels.Extent) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.version, c.extents
}

// refreshing starts the scan, or joins the one running; the channel
// answers when it ends. The scan is detached from ctx (its values are
// kept, not its deadline).
func (c *extentCache) refreshing(ctx context.Context) <-chan singleflight.Result {
	return c.flight.DoChan("extents", func() (any, error) { return c.refresh(context.WithoutCancel(ctx)) })
}

// wait waits for done, at most extentsFirstWait and while ctx lasts.
func (c *extentCache) wait(ctx context.Context, done <-chan singleflight.Result) {
	t := time.NewTimer(extentsFirstWait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	case <-ctx.Done():
	}
}

// refresh scans the extents of the read model's version now and keeps
// them, under extentsScanTimeout; ctx carries the values of the request
// that started it, not its deadline.
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
	c.log.Warn("OGC API: refreshing the collections' extents failed; the last ones known are served (or none)", "err", err)
	return nil, err
}
