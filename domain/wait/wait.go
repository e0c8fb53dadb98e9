package wait

import (
	"context"
	"time"
)

// Sleep waits d or until ctx ends, whichever comes first, and reports
// whether it waited the whole of d. A d of zero or less returns at once,
// true unless ctx has ended.
func Sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
