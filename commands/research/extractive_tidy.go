package research

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/arr-dev/arr/domain/answer"
)

// tidyAnswer is the extractive writer's last stage: the chosen candidates
// as prose, each cited to its source ("... [2]."), no sentence twice (a
// pronoun's predecessor may be quoted already), a colon that introduced a
// command dropped; and the sentences quoted.
func tidyAnswer(cands []candidate, chosen []int) (string, []Chosen) {
	var b strings.Builder
	out := make([]Chosen, 0, len(chosen))
	used := map[string]bool{}
	for _, i := range chosen {
		c := cands[i]
		fresh := freshSentences(c.text, used)
		if len(fresh) == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		s, end := sentenceEnd(strings.TrimSpace(strings.Join(fresh, " ")))
		fmt.Fprintf(&b, "%s [%d]%s", s, c.src+1, end)
		out = append(out, Chosen{Passage: c.passage, Sentence: c.index, Source: c.src + 1})
	}
	return b.String(), out
}

// freshSentences are the sentences of text not in used (compared in lower
// case), which it adds them to.
func freshSentences(text string, used map[string]bool) []string {
	var fresh []string
	for _, s := range answer.Sentences(text) {
		if k := strings.ToLower(s); !used[k] {
			used[k] = true
			fresh = append(fresh, s)
		}
	}
	return fresh
}

// sentenceEnd splits s into its text and the mark that ends it, for the
// citation to stand before the mark: its own ".", "!" or "?", else "."
// (a trailing colon dropped).
func sentenceEnd(s string) (string, string) {
	if r, size := utf8.DecodeLastRuneInString(s); strings.ContainsRune(".!?", r) {
		return s[:len(s)-size], string(r)
	}
	return strings.TrimSuffix(s, ":"), "."
}
