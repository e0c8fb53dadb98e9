package webpage

import "strings"

// Page is a page's text, in sections under their headings.
type Page struct {
	URL   string
	Title string
	// Sections in document order. Text before the first heading is a
	// section with an empty Heading.
	Sections []Section
	// Text is every prose, table and list block, one per line, sections
	// separated by a blank line and each section led by its heading line
	// (what callers that want flat text read). Code is not in Text.
	Text string
	// Published is the page's date, "YYYY-MM-DD" (UTC), or "" when it has
	// none: see Published.
	Published string
}

// Section is the content under one heading.
type Section struct {
	// Heading is the heading path, outermost first, e.g.
	// ["json — JSON encoder and decoder", "Basic Usage"] (the page's h1
	// first when the page has one).
	Heading []string
	// Anchor is the id of the section's heading or enclosing
	// <section>/<div class="section"> (for URL#anchor), or "".
	Anchor string
	Blocks []Block
}

// BlockKind says what a block is.
type BlockKind string

// The kinds of block.
const (
	Prose BlockKind = "prose" // a paragraph (or a dd definition, a blockquote, a note/warning box)
	Term  BlockKind = "term"  // a definition term / API signature (<dt>), e.g. "json.dumps(obj, *, skipkeys=False, ...)"
	Item  BlockKind = "item"  // one list item
	Row   BlockKind = "row"   // one table row, cells joined as "Header: cell; Header: cell" when the table has a header row, else "cell | cell"
	Code  BlockKind = "code"  // a <pre>/code listing or fenced code block, kept verbatim (newlines kept)
)

// Block is one piece of a section.
type Block struct {
	Kind BlockKind
	Text string // white space collapsed except in Code
}

// flatText renders sections as Page.Text: each section's own heading on a
// line, then its blocks but code one per line; a blank line between
// sections.
func flatText(sections []Section) string {
	var b strings.Builder
	for _, s := range sections {
		start := b.Len()
		if n := len(s.Heading); n > 0 {
			b.WriteString(s.Heading[n-1])
			b.WriteByte('\n')
		}
		for _, bl := range s.Blocks {
			if bl.Kind == Code {
				continue
			}
			b.WriteString(bl.Text)
			b.WriteByte('\n')
		}
		if b.Len() > start {
			b.WriteByte('\n')
		}
	}
	return strings.TrimSpace(b.String())
}
