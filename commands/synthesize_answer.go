package commands

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/commands/research"
	"github.com/arr-dev/arr/domain/answer"
	"github.com/arr-dev/arr/eventstore"
)

// Researcher researches and writes an answer; *research.Researcher is one.
type Researcher interface {
	Answer(ctx context.Context, req answer.Request) (research.Result, error)
	Backend() string
}

// SynthesizeAnswer researches a question and records the answer as the
// cache entry of its cache key.
type SynthesizeAnswer struct {
	Request  answer.Request
	Metadata eventstore.Metadata
}

// SynthesizeAnswerHandler handles SynthesizeAnswer.
type SynthesizeAnswerHandler struct {
	store    Appender
	clock    Clock
	research Researcher
}

// NewSynthesizeAnswerHandler refuses nil dependencies.
func NewSynthesizeAnswerHandler(store Appender, clock Clock, r Researcher) (*SynthesizeAnswerHandler, error) {
	if store == nil || clock == nil || r == nil {
		return nil, errors.New("synthesize answer: nil dependency")
	}
	return &SynthesizeAnswerHandler{store: store, clock: clock, research: r}, nil
}

// Handle researches the question and appends AnswerSynthesized; it returns
// the event and its log position. A search backend that is down fails the
// command (an error wrapping domain.ErrUnavailable) and appends nothing.
func (h *SynthesizeAnswerHandler) Handle(ctx context.Context, c SynthesizeAnswer) (answer.AnswerSynthesized, uint64, error) {
	res, err := h.research.Answer(ctx, c.Request)
	if err != nil {
		return answer.AnswerSynthesized{}, 0, fmt.Errorf("researching: %w", err)
	}
	id, err := uuid.NewV7()
	if err != nil {
		return answer.AnswerSynthesized{}, 0, err
	}
	e := answer.AnswerSynthesized{
		AnswerID: id, Question: c.Request.Query, Normalized: c.Request.Normalized, CacheKey: c.Request.CacheKey(),
		Tier: c.Request.Tier, Mode: c.Request.Mode, Answer: res.Answer, Sources: res.Sources, Synthesis: res.Synthesis, AnswerFound: res.Found,
		Model: res.Model, SubQuestions: res.SubQuestions, Backend: h.research.Backend(), Costs: res.Costs,
		SynthesizedAt: h.clock().UTC(), ValidForSeconds: int64(answer.TTL(res.Synthesis).Seconds()),
		Retrieval: &res.Retrieval,
	}
	if f := c.Request.Filters; f.Any() {
		e.Filters = &f
	}
	if cs := c.Request.ContextSize; cs != "" && cs != answer.ContextMedium {
		e.ContextSize = cs
	}
	if len(c.Request.Messages) > 0 {
		e.ResolvedQuery = c.Request.Question()
		e.Conversation = &answer.Conversation{Turns: len(c.Request.Messages), ResolvedBy: c.Request.ResolvedBy}
	}
	if f := c.Request.Format; f.Structured() {
		e.Format = &f
	}
	e.CleanWorldText()
	ne, err := eventstore.Encode(e, c.Metadata)
	if err != nil {
		return answer.AnswerSynthesized{}, 0, err
	}
	ar, err := h.store.Append(ctx, answer.StreamID(e.CacheKey), eventstore.Any(), ne)
	if err != nil {
		return answer.AnswerSynthesized{}, 0, fmt.Errorf("recording the answer: %w", err)
	}
	return e, ar.LastPosition, nil
}
