package main

import (
	"fmt"
	"html"
	"regexp"
	"strings"
)

// normalizer turns answers, facts and pages into the text facts are
// matched against: typographic quotes and no-break spaces made plain,
// lower case, white space collapsed; in answers, citation markers
// removed. Safe for concurrent use.
type normalizer struct {
	marker   *regexp.Regexp
	space    *regexp.Regexp
	plain    *strings.Replacer
	script   *regexp.Regexp
	style    *regexp.Regexp
	comment  *regexp.Regexp
	blockTag *regexp.Regexp
	tag      *regexp.Regexp
	mdLink   *regexp.Regexp
	mdMarks  *strings.Replacer
}

func newNormalizer() *normalizer {
	return &normalizer{
		// A marker is [n] with n >= 1: [0] is a subscript (heap[0]), never
		// a citation.
		marker: regexp.MustCompile(`\[[1-9][0-9]*\]`),
		space:  regexp.MustCompile(`\s+`),
		plain: strings.NewReplacer("\u2018", "'", "\u2019", "'", "\u201c", `"`, "\u201d", `"`,
			"\u00a0", " ", "\u202f", " ", "\u00b6", " ", "\u200b", ""),
		script:   regexp.MustCompile(`(?is)<script\b.*?</script\s*>`),
		style:    regexp.MustCompile(`(?is)<style\b.*?</style\s*>`),
		comment:  regexp.MustCompile(`(?s)<!--.*?-->`),
		blockTag: regexp.MustCompile(`(?i)</?(p|div|li|ul|ol|dl|dt|dd|tr|td|th|table|thead|tbody|caption|h[1-6]|br|hr|pre|section|blockquote|nav|header|footer|article|aside|form|figure|figcaption|title|body|head|html)\b[^>]*>`),
		tag:      regexp.MustCompile(`<[^>]*>`),
		mdLink:   regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`),
		mdMarks:  strings.NewReplacer("`", "", "**", ""),
	}
}

// stripMarkers removes the [n] citation markers.
func (n *normalizer) stripMarkers(s string) string { return n.marker.ReplaceAllString(s, "") }

// collapse collapses white space runs into one space and trims.
func (n *normalizer) collapse(s string) string {
	return strings.TrimSpace(n.space.ReplaceAllString(s, " "))
}

// text is s as facts are matched against it.
func (n *normalizer) text(s string) string {
	return strings.ToLower(n.collapse(n.plain.Replace(s)))
}

// answer is an answer as facts are matched against it: text without the
// citation markers.
func (n *normalizer) answer(s string) string { return n.text(n.stripMarkers(s)) }

// htmlText is the text of an HTML page: scripts, styles and comments
// dropped, block elements separated by a space, inline tags removed,
// entities decoded, white space collapsed.
func (n *normalizer) htmlText(b []byte) string {
	s := n.script.ReplaceAllString(string(b), " ")
	s = n.style.ReplaceAllString(s, " ")
	s = n.comment.ReplaceAllString(s, " ")
	s = n.blockTag.ReplaceAllString(s, " ")
	s = n.tag.ReplaceAllString(s, "")
	return n.collapse(html.UnescapeString(s))
}

// markdownText is the text of a Markdown document as a reader sees it: a
// link keeps its text, code spans their code, "**" goes (as arr's own
// Markdown extraction does), white space collapsed.
func (n *normalizer) markdownText(b []byte) string {
	s := n.mdLink.ReplaceAllString(string(b), "$1")
	return n.collapse(n.mdMarks.Replace(s))
}

// matcher compiles one string of a fact.
func (n *normalizer) matcher(s string) (matcher, error) {
	if pat, ok := strings.CutPrefix(s, "re:"); ok {
		re, err := regexp.Compile("(?i)" + pat)
		if err != nil {
			return matcher{}, fmt.Errorf("compiling: %w", err)
		}
		return matcher{src: s, re: re}, nil
	}
	lit := n.text(s)
	if lit == "" {
		return matcher{}, fmt.Errorf("empty after normalizing")
	}
	return matcher{src: s, lit: lit}, nil
}
