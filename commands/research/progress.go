package research

import (
	"context"

	"github.com/arr-dev/arr/adapters/llm"
	"github.com/arr-dev/arr/domain/answer"
)

// Progress is told of an answer's parts while it is written, for a caller
// that streams them (the answer service's text/event-stream). Like
// net/http/httptrace's hooks it travels in the context (WithProgress): the
// research runs under the command that records it, and neither the
// command nor its result carries a callback. Its functions are called from
// the goroutine that runs Answer, in order; nil ones are skipped.
type Progress struct {
	// Sources is called with the numbered sources the answer will cite
	// by: before a model writes (the sources as the model sees them; the
	// final answer keeps the cited ones, renumbered), or before an
	// extractive answer's sentences (the final sources). A later call
	// replaces an earlier one (the model failed and the answer is
	// written extractively).
	Sources func([]answer.Source)
	// Delta is called with answer text as it is written, and only with
	// text of the answer recorded: a model's text sentence by sentence,
	// once its citations pass the check (checked and renumbered, with a
	// Sources call before a delta that cites a source not shown yet), or
	// an extractive answer's sentences. The deltas joined are the
	// answer.
	Delta func(string)
	// Cut, when set, is closed when a streamed model answer is to stop
	// where it is (nobody reads it any more and its bound passed): the
	// model call is cancelled and the text relayed so far is the answer,
	// recorded as any other.
	Cut <-chan struct{}
}

// modelContext is ctx for a model call, cancelled also when p.Cut
// closes; stop releases it.
func (p *Progress) modelContext(ctx context.Context) (context.Context, context.CancelFunc) {
	mctx, cancel := context.WithCancel(ctx)
	if p.Cut != nil {
		go func() {
			select {
			case <-p.Cut:
				cancel()
			case <-mctx.Done():
			}
		}()
	}
	return mctx, cancel
}

type progressKey struct{}

// WithProgress returns ctx carrying p for the Answer run under it.
func WithProgress(ctx context.Context, p *Progress) context.Context {
	return context.WithValue(ctx, progressKey{}, p)
}

// progressOf is the Progress ctx carries; one with nil hooks when none.
func progressOf(ctx context.Context) *Progress {
	if p, ok := ctx.Value(progressKey{}).(*Progress); ok && p != nil {
		return p
	}
	return &Progress{}
}

func (p *Progress) sources(s []answer.Source) {
	if p.Sources != nil {
		p.Sources(s)
	}
}

func (p *Progress) delta(s string) {
	if p.Delta != nil && s != "" {
		p.Delta(s)
	}
}

// StreamingModel is a Model that can also relay a completion's text as it
// arrives; *llm.Client is one. A streamed answer uses it.
type StreamingModel interface {
	Model
	Stream(ctx context.Context, r llm.Request, delta func(string)) (llm.Response, error)
}
