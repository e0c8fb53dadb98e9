package routing

import (
	"math"
	"strings"
)

// Message is what difficulty scoring and token estimation see of one chat
// message: its role and its text (text parts joined; images and audio are
// not scored).
type Message struct {
	Role string
	Text string
}

// Features are the request properties the difficulty score reads.
type Features struct {
	Messages []Message
	// Tools is the number of tools offered.
	Tools int
	// JSONMode is true for response_format json_object or json_schema.
	JSONMode bool
}

// The weights of the difficulty score. Each cue adds its weight once; the
// sum is capped at 1.
const (
	wBase      = 0.05
	wLength    = 0.30 // scaled by log10 of the characters, full at 100k
	wCode      = 0.20
	wMath      = 0.15
	wReasoning = 0.20
	wTools     = 0.10
	wJSON      = 0.05
	wTurns     = 0.10 // 0.02 per turn after the first, up to this
)

var (
	codeCues = []string{"```", "func ", "def ", "class ", "#include", "import ", "select ", "stack trace", "traceback",
		"compile", "regex", "function(", "=>", "){", "};", "segfault", "refactor", "debug"}
	mathCues = []string{"integral", "derivative", "equation", "theorem", "prove", "proof", "matrix", "probability",
		"\\frac", "\\sum", "lemma", "eigen", "solve for", "calculate", "compute"}
	reasoningCues = []string{"step by step", "step-by-step", "explain why", "reason about", "analyze", "analyse",
		"compare", "trade-off", "tradeoff", "pros and cons", "design", "architecture", "plan ", "strategy",
		"evaluate", "critique", "justify", "think carefully"}
)

// Difficulty scores a request in [0, 1]: a base of 0.05, plus its length
// (0.30 × log10(characters)/5, full at 100,000 characters), plus 0.20 if
// it looks like code, 0.15 for mathematics, 0.20 for reasoning cues ("step
// by step", "compare", "design", ...), 0.10 when tools are offered, 0.05
// in JSON mode, and 0.02 per turn after the first (at most 0.10). The cues
// are looked for in the user, system and tool messages, case-insensitive.
func Difficulty(f Features) float64 {
	var chars int
	var sb strings.Builder
	turns := 0
	for _, m := range f.Messages {
		chars += len(m.Text)
		if m.Role == "user" {
			turns++
		}
		if m.Role != "assistant" {
			sb.WriteString(strings.ToLower(m.Text))
			sb.WriteByte('\n')
		}
	}
	text := sb.String()
	s := wBase
	if chars > 0 {
		s += wLength * min(1, math.Log10(float64(chars))/5)
	}
	if containsAny(text, codeCues) {
		s += wCode
	}
	if containsAny(text, mathCues) || mathExpression(text) {
		s += wMath
	}
	if containsAny(text, reasoningCues) {
		s += wReasoning
	}
	if f.Tools > 0 {
		s += wTools
	}
	if f.JSONMode {
		s += wJSON
	}
	if turns > 1 {
		s += min(wTurns, 0.02*float64(turns-1))
	}
	return math.Round(min(1, s)*1000) / 1000
}

func containsAny(s string, cues []string) bool {
	for _, c := range cues {
		if strings.Contains(s, c) {
			return true
		}
	}
	return false
}

// mathExpression finds a digit, an operator and a digit in a row ("3*x+2=11"
// counts, "3 apples" does not).
func mathExpression(s string) bool {
	for i := 1; i+1 < len(s); i++ {
		switch s[i] {
		case '+', '*', '/', '^', '=':
			if isDigitish(s[i-1]) && isDigitish(s[i+1]) {
				return true
			}
		}
	}
	return false
}

func isDigitish(b byte) bool { return b >= '0' && b <= '9' || b == 'x' || b == 'y' || b == 'n' }

// Band is a third of the difficulty range: feedback is kept per tier and
// band.
type Band string

// The difficulty bands.
const (
	BandLow  Band = "low"  // [0, 1/3)
	BandMid  Band = "mid"  // [1/3, 2/3)
	BandHigh Band = "high" // [2/3, 1]
)

// BandOf returns the band of a difficulty score.
func BandOf(d float64) Band {
	switch {
	case d < 1.0/3:
		return BandLow
	case d < 2.0/3:
		return BandMid
	}
	return BandHigh
}

// EstimateTokens estimates the prompt tokens of the messages on the high
// side: one token per 3 bytes of text plus 4 per message and 3 for the
// reply's priming. Used for the cost ceiling before the upstream has
// counted; the recorded cost uses the upstream's count.
func EstimateTokens(msgs []Message, extraBytes int) int64 {
	n := int64(3)
	for _, m := range msgs {
		n += 4 + int64(len(m.Text)+2)/3
	}
	return n + int64(extraBytes+2)/3
}
