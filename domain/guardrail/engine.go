package guardrail

import (
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"
)

// Where a rule fired.
const (
	Prompt = "prompt"
	Output = "output"
)

// maxMatches bounds the matches one scan keeps per rule (a deny pattern
// such as "a" on a megabyte of a's): a text on which a redacting rule
// reaches it is refused (overflow), never sent partly redacted.
const maxMatches = 10000

// Engine is a compiled Policy. Safe for concurrent use.
type Engine struct {
	policy Policy
	pii    map[Detector]PIIRule
	deny   []compiledDeny
}

type compiledDeny struct {
	re     *regexp.Regexp
	action Action
	on     On
}

// Compile normalizes and validates p and compiles its patterns once.
func Compile(p Policy) (*Engine, error) {
	p = p.Normalize()
	if err := p.Validate(); err != nil {
		return nil, err
	}
	e := &Engine{policy: p, pii: map[Detector]PIIRule{}}
	for _, r := range p.PII {
		e.pii[r.Type] = r
	}
	for _, d := range p.Deny {
		e.deny = append(e.deny, compiledDeny{re: regexp.MustCompile(d.Pattern), action: d.Action, on: d.On})
	}
	return e, nil
}

// Policy is the engine's normalized policy.
func (e *Engine) Policy() Policy { return e.policy }

// Scans reports whether some PII or deny rule scans text found at where
// (Prompt or Output); else Apply changes nothing there.
func (e *Engine) Scans(where string) bool {
	for _, r := range e.pii {
		if r.On.scans(where) {
			return true
		}
	}
	for _, d := range e.deny {
		if d.on.scans(where) {
			return true
		}
	}
	return false
}

// ScansOutput reports whether replies are scanned.
func (e *Engine) ScansOutput() bool { return e.Scans(Output) }

// CheckSize is the prompt-size cap's refusal for a prompt of n bytes of
// text, or nil.
func (e *Engine) CheckSize(n int64) *Fired {
	if e.policy.MaxPromptBytes > 0 && n > e.policy.MaxPromptBytes {
		return &Fired{Rule: RulePromptTooLarge, Action: Refuse, Where: Prompt}
	}
	return nil
}

// Result is what Apply made of a text.
type Result struct {
	// Text is the text with the redacted matches replaced.
	Text string
	// Fired lists each rule that fired once, in the order first seen.
	Fired []Fired
	// Refused is the first refusing rule that fired, or nil.
	Refused *Fired
}

// scanned is a match with the action of its rule.
type scanned struct {
	Match
	action Action
	// whole: the refusal of the whole text (overflow); it is replaced
	// whole.
	whole bool
}

// scan finds every rule's matches in s, in text order; redacting matches
// never overlap (a deny pattern's match overlapping a PII one is still
// seen, for refusals and logs).
//
// The rules run on the text's folded view (fold), their matches mapped
// back to the text's spans.
func (e *Engine) scan(s, where string) []scanned {
	f := fold(s)
	out := e.scanView(f.text, where)
	for i := range out {
		if out[i].whole {
			out[i].Start, out[i].End = 0, len(s)
			continue
		}
		out[i].Start, out[i].End = f.span(out[i].Start, out[i].End)
	}
	return out
}

// scanView is scan on the view.
func (e *Engine) scanView(s, where string) []scanned {
	var out []scanned
	kinds := map[Detector]PIIRule{}
	for k, r := range e.pii {
		if r.On.scans(where) {
			kinds[k] = r
		}
	}
	for _, m := range scanPII(s, kinds) {
		out = append(out, scanned{m, e.pii[Detector(strings.TrimPrefix(m.Rule, "pii_"))].Action, false})
	}
	for _, d := range e.deny {
		if !d.on.scans(where) {
			continue
		}
		locs := d.re.FindAllStringIndex(s, maxMatches)
		for _, loc := range locs {
			if loc[0] == loc[1] {
				continue // an empty match redacts nothing
			}
			out = append(out, scanned{Match{Start: loc[0], End: loc[1], Rule: RuleDenyPattern, Placeholder: DenyPlaceholder}, d.action, false})
		}
		if len(locs) == maxMatches && d.action == Redact {
			out = append(out, overflow(s))
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	return out
}

// overflow is the refusal of a text on which a redacting rule reached
// maxMatches: the spans past the cap are not known, so the text is never
// sent partly redacted (a prompt has no next scan; a stream's held text
// is refused whole).
func overflow(s string) scanned {
	return scanned{Match{Start: 0, End: len(s), Rule: RuleDenyPattern, Placeholder: DenyPlaceholder}, Refuse, true}
}

// Apply runs the rules over s, found at where (Prompt or Output).
func (e *Engine) Apply(s, where string) Result {
	if !e.Scans(where) {
		return Result{Text: s}
	}
	ms := e.scan(s, where)
	text, fired, refused := redact(s, ms, len(s), where)
	return Result{Text: text, Fired: fired, Refused: refused}
}

// redact replaces the redacting matches that end at or before upTo in s
// and returns s[:upTo] so redacted, with what fired there.
func redact(s string, ms []scanned, upTo int, where string) (string, []Fired, *Fired) {
	var b strings.Builder
	var fired []Fired
	var refused *Fired
	at := 0
	for _, m := range ms {
		if m.End > upTo {
			continue
		}
		f := Fired{Rule: m.Rule, Action: m.action, Where: where}
		if !slices.Contains(fired, f) {
			fired = append(fired, f)
		}
		if m.action == Refuse && refused == nil {
			refused = &f
		}
		if m.action != Redact || m.Start < at {
			continue
		}
		b.WriteString(s[at:m.Start])
		b.WriteString(m.Placeholder)
		at = m.End
	}
	b.WriteString(s[at:upTo])
	if slices.ContainsFunc(ms, func(m scanned) bool { return m.whole && m.End <= upTo }) {
		b.Reset()
		b.WriteString(DenyPlaceholder)
	}
	if refused != nil {
		r := *refused
		refused = &r
	}
	return b.String(), fired, refused
}

// DefaultWindow is the bytes of streamed output held back by default
// (Engine.Stream): a match of up to this many bytes is caught however the
// stream's chunks cut it.
const DefaultWindow = 256

// StreamFilter applies an engine to text that arrives in pieces, holding
// back at most window bytes (plus a match that straddles them) so that a
// match across pieces is caught. Not safe for concurrent use.
type StreamFilter struct {
	e      *Engine
	window int
	held   string
	fired  []Fired
}

// Stream returns a filter of streamed output holding back window bytes
// (DefaultWindow when window <= 0).
func (e *Engine) Stream(window int) *StreamFilter {
	if window <= 0 {
		window = DefaultWindow
	}
	return &StreamFilter{e: e, window: window}
}

// Fired lists the rules that fired so far, each once.
func (f *StreamFilter) Fired() []Fired { return f.fired }

// Held is how many bytes the filter holds back now.
func (f *StreamFilter) Held() int { return len(f.held) }

// Write takes the next piece and returns the text that may be sent now
// (redacted), and the refusing rule if one fired.
func (f *StreamFilter) Write(piece string) (string, *Fired) {
	f.held += piece
	if len(f.held) <= f.window {
		return "", nil
	}
	ms := f.e.scan(f.held, Output)
	cut := len(f.held) - f.window
	for !utf8.RuneStart(f.held[cut]) && cut > 0 {
		cut--
	}
	// A match that straddles the cut is held whole, unless holding it
	// would hold everything (then it is sent, redacted, as matched).
	for tries, moved := 0, true; moved; tries++ {
		moved = false
		if tries > len(ms) {
			cut = len(f.held) // matches that chain over the whole window: send it all, scanned whole
			break
		}
		for _, m := range ms {
			if m.Start < cut && m.End > cut {
				if m.Start > 0 {
					cut = m.Start
				} else {
					cut = m.End
				}
				moved = true
				break
			}
		}
	}
	return f.emit(ms, cut)
}

// Flush sends what is held (the stream ended).
func (f *StreamFilter) Flush() (string, *Fired) {
	if f.held == "" {
		return "", nil
	}
	return f.emit(f.e.scan(f.held, Output), len(f.held))
}

func (f *StreamFilter) emit(ms []scanned, cut int) (string, *Fired) {
	out, fired, refused := redact(f.held, ms, cut, Output)
	for _, x := range fired {
		if !slices.Contains(f.fired, x) {
			f.fired = append(f.fired, x)
		}
	}
	f.held = f.held[cut:]
	return out, refused
}
