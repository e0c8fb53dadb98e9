package answer

import (
	"regexp"
	"strconv"
	"strings"
)

// citationGroup matches a bracketed citation: [3], [1, 2], [1][2] is two
// groups. Ranges and text inside brackets are not citations.
var citationGroup = regexp.MustCompile(`\[\s*(\d{1,3}(?:\s*,\s*\d{1,3})*)\s*\]`)

// Cited is the outcome of checking an answer's citations.
type Cited struct {
	// Answer is the text with every marker checked: markers that refer to
	// no source are gone, the rest renumbered 1..n in order of first use,
	// and grouped markers written one bracket each ([1][2]).
	Answer string
	// Order lists, for each new number n (index n-1), the index into the
	// sources the answer was written against.
	Order []int
	// Dropped counts markers that referred to nothing.
	Dropped int
}

// CheckCitations checks every [n] marker of text against nSources sources
// (numbered from 1): markers outside 1..nSources are dropped, the others
// renumbered so that the sources returned are exactly the cited ones, in
// order of first citation.
func CheckCitations(text string, nSources int) Cited {
	var c Cited
	renum := map[int]int{}
	out := citationGroup.ReplaceAllStringFunc(text, func(m string) string {
		inner := citationGroup.FindStringSubmatch(m)[1]
		var b strings.Builder
		seen := map[int]bool{}
		for _, part := range strings.Split(inner, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(part))
			if err != nil || n < 1 || n > nSources {
				c.Dropped++
				continue
			}
			nn, ok := renum[n]
			if !ok {
				c.Order = append(c.Order, n-1)
				nn = len(c.Order)
				renum[n] = nn
			}
			if seen[nn] {
				continue
			}
			seen[nn] = true
			b.WriteString("[" + strconv.Itoa(nn) + "]")
		}
		return b.String()
	})
	c.Answer = tidy(out)
	return c
}

var (
	// A blank before punctuation that ends a clause, not before ".xz" or
	// ".5".
	spaceBeforePunct = regexp.MustCompile(`[ \t]+([.,;:!?])([\s"')\]]|$)`)
	multiSpace       = regexp.MustCompile(`[ \t]{2,}`)
)

// tidy removes the blanks left where dropped markers stood.
func tidy(s string) string {
	s = spaceBeforePunct.ReplaceAllString(s, "$1$2")
	s = multiSpace.ReplaceAllString(s, " ")
	return strings.TrimSpace(s)
}

// Markers returns the citation numbers used in text, in order, repeats
// included.
func Markers(text string) []int {
	var out []int
	for _, m := range citationGroup.FindAllStringSubmatch(text, -1) {
		for _, part := range strings.Split(m[1], ",") {
			if n, err := strconv.Atoi(strings.TrimSpace(part)); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}
