package research

import (
	"context"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/arr-dev/arr/adapters/llm"
	"github.com/arr-dev/arr/domain/answer"
	"github.com/arr-dev/arr/domain/text"
)

const rewritePrompt = `You rewrite the last question of a conversation so that it stands on its own: replace pronouns and elliptic references with what they refer to in the earlier turns, keep everything else as the user wrote it. If it already stands on its own, return it unchanged. Reply with the question only: one line, no quotes, no answer.`

// Resolve makes the follow-up question q self-contained against the
// conversation's earlier turns ms: with a language model configured it
// asks the model to rewrite it (a reply that is empty, more than one
// line or over answer.MaxQuestionChars is not used), else, or when the
// model fails, it applies answer.ResolveFollowUp. It returns the
// question and how it was resolved ("llm", "extractive", "unchanged").
// With no turns q is returned unchanged.
func (r *Researcher) Resolve(ctx context.Context, q string, ms []answer.Message) (string, string) {
	if len(ms) == 0 {
		return q, "unchanged"
	}
	if r.cfg.Model != nil {
		if s, ok := r.rewrite(ctx, q, ms); ok {
			if s == q {
				return q, "unchanged"
			}
			return s, "llm"
		}
	}
	if s, changed := answer.ResolveFollowUp(q, ms); changed {
		return s, "extractive"
	}
	return q, "unchanged"
}

func (r *Researcher) rewrite(ctx context.Context, q string, ms []answer.Message) (string, bool) {
	var b strings.Builder
	b.WriteString("Conversation:\n")
	for _, m := range ms {
		b.WriteString(m.Role + ": " + m.Content + "\n")
	}
	b.WriteString("\nLast question: " + q)
	rctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	out, err := r.cfg.Model.Complete(rctx, llm.Request{Model: r.cfg.ModelName, Temperature: 0, MaxTokens: 200, Messages: []llm.Message{
		{Role: "system", Content: rewritePrompt},
		{Role: "user", Content: b.String()},
	}})
	if err != nil {
		r.cfg.Logger.Warn("language model unavailable for resolving a follow-up; resolving extractively", "err", err)
		return "", false
	}
	s := strings.Trim(strings.TrimSpace(text.Clean(out.Content)), "\"'“”")
	s = strings.TrimSpace(strings.TrimPrefix(s, "Last question:"))
	if s == "" || strings.ContainsRune(s, '\n') || utf8.RuneCountInString(s) > answer.MaxQuestionChars || len(answer.Normalize(s)) < answer.MinQuestionChars {
		r.cfg.Logger.Warn("the language model's rewrite of a follow-up is unusable; resolving extractively", "reply", s)
		return "", false
	}
	return s, true
}
