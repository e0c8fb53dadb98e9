package answerapi

import (
	"context"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/domain/answer"
	"github.com/arr-dev/arr/domain/wait"
)

// ServedAppender appends AnswerServed events;
// *commands.RecordAnswersServedHandler is one.
type ServedAppender interface {
	Handle(ctx context.Context, c commands.RecordAnswersServed) (uint64, error)
}

// Served records one AnswerServed per answered call without making the
// call wait for the event log: calls queue their event, Run appends the
// queue every 100 ms (or at 500 events), retrying a failed append with the
// same event ids. On shutdown Run appends what is queued, bounded by 10 s.
// Safe for concurrent use.
type Served struct {
	app ServedAppender
	ch  chan commands.ServedAnswer
	log *slog.Logger
}

// NewServed returns a recorder over app.
func NewServed(app ServedAppender, log *slog.Logger) *Served {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Served{app: app, ch: make(chan commands.ServedAnswer, 20000), log: log}
}

// Record queues e. If the queue is full (the log is down for long), the
// event is dropped and logged: serving is not held up by metering.
func (s *Served) Record(e answer.AnswerServed) {
	id, err := uuid.NewV7()
	if err != nil {
		return
	}
	select {
	case s.ch <- commands.ServedAnswer{EventID: id, Event: e}:
	default:
		s.log.Error("AnswerServed queue full; dropping one event", "key_id", e.KeyID)
	}
}

// Run appends queued events until ctx ends, then drains the queue.
func (s *Served) Run(ctx context.Context) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var buf []commands.ServedAnswer
	flush := func(ctx context.Context) {
		for attempt := 0; len(buf) > 0 && attempt < 8; attempt++ {
			// An append in flight finishes even if shutdown begins
			// meanwhile (a cancelled one would only be done again).
			actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			_, err := s.app.Handle(actx, commands.RecordAnswersServed{Served: buf})
			cancel()
			if err == nil {
				buf = buf[:0]
				return
			}
			s.log.Warn("recording served answers; retrying", "events", len(buf), "err", err)
			if !wait.Sleep(ctx, time.Duration(250<<attempt)*time.Millisecond) {
				return
			}
		}
		if len(buf) > 0 {
			s.log.Error("giving up recording served answers", "events", len(buf))
			buf = buf[:0]
		}
	}
	for {
		select {
		case e := <-s.ch:
			buf = append(buf, e)
			if len(buf) >= 500 {
				flush(ctx)
			}
		case <-tick.C:
			flush(ctx)
		case <-ctx.Done():
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			for {
				select {
				case e := <-s.ch:
					buf = append(buf, e)
					continue
				default:
				}
				break
			}
			flush(dctx)
			return nil
		}
	}
}
