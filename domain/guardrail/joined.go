package guardrail

import "slices"

// Joined scans texts that the upstream reads as one (a message's text
// parts, consecutive user messages) joined, each to the next by sep, for
// the matches that cross from one text into another: a card number cut in
// two parts is seen whole. The matches inside one text are Apply's. A
// crossing match of a refusing rule refuses; of a logging rule is
// logged; of a redacting rule refuses too (as that rule, action refuse),
// since no one text holds the span to redact: the prompt fails closed
// rather than sending the pieces.
func (e *Engine) Joined(texts []string, sep, where string) ([]Fired, *Fired) {
	if len(texts) < 2 || !e.Scans(where) {
		return nil, nil
	}
	var joined []byte
	starts, ends := make([]int, len(texts)), make([]int, len(texts))
	for i, t := range texts {
		if i > 0 {
			joined = append(joined, sep...)
		}
		starts[i] = len(joined)
		joined = append(joined, t...)
		ends[i] = len(joined)
	}
	var fired []Fired
	var refused *Fired
	for _, m := range e.scan(string(joined), where) {
		if !m.whole && within(starts, ends, m.Start, m.End) {
			continue
		}
		f := Fired{Rule: m.Rule, Action: m.action, Where: where}
		if m.action != Log {
			f.Action = Refuse
		}
		if !slices.Contains(fired, f) {
			fired = append(fired, f)
		}
		if f.Action == Refuse && refused == nil {
			r := f
			refused = &r
		}
	}
	return fired, refused
}

// within reports whether [start, end) lies inside one of the texts.
func within(starts, ends []int, start, end int) bool {
	for i := range starts {
		if starts[i] <= start && end <= ends[i] {
			return true
		}
	}
	return false
}
