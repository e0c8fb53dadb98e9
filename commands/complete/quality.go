package complete

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/arr-dev/arr/domain/routing"
)

// FeedbackSource reads the tier-quality read model;
// *tierquality.Queries is one.
type FeedbackSource interface {
	Feedback(ctx context.Context) (routing.Feedback, error)
}

// feedbackView keeps a snapshot of the tier-quality read model for the
// router, refreshed in the background when it is older than the refresh
// interval, so no completion waits on a query. Safe for concurrent use.
type feedbackView struct {
	src     FeedbackSource
	every   time.Duration
	log     *slog.Logger
	snap    atomic.Pointer[snapshot]
	loading atomic.Bool
}

type snapshot struct {
	fb routing.Feedback
	at time.Time
}

func newFeedbackView(src FeedbackSource, every time.Duration, log *slog.Logger) *feedbackView {
	if every <= 0 {
		every = time.Second
	}
	v := &feedbackView{src: src, every: every, log: log}
	v.snap.Store(&snapshot{})
	if src != nil {
		// Load at once, so the first requests after a start already see
		// the feedback.
		v.loading.Store(true)
		go v.refresh()
	}
	return v
}

// get returns the current snapshot and starts a refresh if it is stale.
func (v *feedbackView) get() routing.Feedback {
	if v == nil || v.src == nil {
		return nil
	}
	s := v.snap.Load()
	if time.Since(s.at) > v.every && v.loading.CompareAndSwap(false, true) {
		go v.refresh()
	}
	return s.fb
}

func (v *feedbackView) refresh() {
	defer v.loading.Store(false)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	fb, err := v.src.Feedback(ctx)
	if err != nil {
		v.log.Warn("reading tier quality for routing; keeping the last snapshot", "err", err)
		return
	}
	v.snap.Store(&snapshot{fb: fb, at: time.Now()})
}
