package research

import (
	"slices"
	"strings"

	"github.com/arr-dev/arr/domain/answer"
)

// release relays a model's streamed answer only as far as it is the
// answer: the text up to its last sentence end, once its citations pass
// answer.CheckCitations (at least one marker refers to a source),
// checked and renumbered. What it relayed is a prefix of the answer it
// returns (answer), so a stream shows exactly the text recorded: a
// model whose text is refused afterwards (it cites nothing) relayed
// nothing, and a model that broke off after text was relayed answers
// with what was relayed.
type release struct {
	prog *Progress
	all  []answer.Source // as the model numbers them
	raw  strings.Builder
	sent answer.Cited // the checked text relayed so far
	// shown is the last sources event's, as indexes into all: all of
	// them, in the model's numbering, until a cited source renumbers
	// them.
	shown []int
}

func newRelease(prog *Progress, all []answer.Source) *release {
	r := &release{prog: prog, all: all, shown: make([]int, len(all))}
	for i := range r.shown {
		r.shown[i] = i
	}
	return r
}

// add takes the model's next token.
func (r *release) add(tok string) {
	r.raw.WriteString(tok)
	raw := r.raw.String()
	end := lastSentenceEnd(raw)
	if end <= len(r.sent.Answer) {
		return
	}
	r.relay(answer.CheckCitations(raw[:end], len(r.all)))
}

// relay sends what c adds to the text relayed, when c passes and
// extends it.
func (r *release) relay(c answer.Cited) {
	if len(c.Order) == 0 || !strings.HasPrefix(c.Answer, r.sent.Answer) || len(c.Answer) == len(r.sent.Answer) {
		return
	}
	if !slices.Equal(c.Order, r.shown) {
		r.prog.sources(pick(r.all, c.Order))
		r.shown = c.Order
	}
	r.prog.delta(c.Answer[len(r.sent.Answer):])
	r.sent = c
}

// answer is the checked answer once the model is done: complete is its
// whole text (ok false when it failed or broke off). ok is false when
// there is no model answer (nothing relayed and no citation): the caller
// writes one extractively, which nothing relayed contradicts.
func (r *release) answer(complete string, ok bool) (answer.Cited, bool) {
	if ok {
		r.relay(answer.CheckCitations(complete, len(r.all)))
	}
	return r.sent, len(r.sent.Order) > 0
}

// lastSentenceEnd is the length of text's prefix up to its last sentence end
// (".", "!" or "?" followed by a blank or at the end), 0 when none.
func lastSentenceEnd(text string) int {
	for i := len(text) - 1; i >= 0; i-- {
		switch text[i] {
		case '.', '!', '?':
			if i == len(text)-1 || text[i+1] == ' ' || text[i+1] == '\n' || text[i+1] == '\t' {
				return i + 1
			}
		}
	}
	return 0
}
