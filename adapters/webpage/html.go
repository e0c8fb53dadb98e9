package webpage

import (
	"bytes"
	"fmt"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// extractHTML walks the page's main content into sections.
func extractHTML(r Raw) (Page, error) {
	doc, err := html.Parse(bytes.NewReader(r.Body))
	if err != nil {
		return Page{}, fmt.Errorf("extracting %s: %w", r.URL, err)
	}
	root, inContent := mainContent(doc)
	w := walker{}
	w.children(root, scope{kind: Prose, inContent: inContent})
	w.flush(Prose)
	w.flushPrefix()
	if w.out.empty() {
		return Page{}, fmt.Errorf("extracting %s: no readable text", r.URL)
	}
	title := w.h1
	if title == "" {
		title = pageTitle(doc)
	}
	return Page{URL: r.URL, Title: title, Sections: w.out.sections, Text: flatText(w.out.sections), Published: htmlDate(doc)}, nil
}

// scope is what a node inherits from the elements around it.
type scope struct {
	kind      BlockKind // what text here becomes: Prose, or Item in a li, Term in a dt
	inContent bool      // inside an article, main, section or the main element
}

// walker turns the DOM into blocks. Inline text gathers in buf until a
// block boundary flushes it as one block.
type walker struct {
	out    outline
	buf    strings.Builder
	prefix string // a note's title ("Note:"), to lead its first paragraph
	anchor string // the id of the section element whose heading is next
	h1     string
}

func (w *walker) children(n *html.Node, sc scope) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		w.node(c, sc)
	}
}

func (w *walker) node(n *html.Node, sc scope) {
	if n.Type == html.TextNode {
		w.buf.WriteString(n.Data)
		return
	}
	if n.Type != html.ElementNode || dropped(n, sc.inContent) {
		return
	}
	a := n.DataAtom
	outer := sc.kind // text gathered so far belongs to the parent
	if level := headingLevel(a); level > 0 {
		w.flush(sc.kind)
		w.heading(n, level)
		return
	}
	switch a {
	case atom.Br:
		w.buf.WriteByte('\n')
		return
	case atom.Pre:
		w.flush(sc.kind)
		w.flushPrefix()
		w.out.add(Code, preText(n))
		return
	case atom.Table:
		w.flush(sc.kind)
		if !layoutTable(n) {
			w.flushPrefix()
			w.table(n)
			return
		}
	case atom.Li:
		sc.kind = Item
	case atom.Dt:
		sc.kind = Term
	case atom.Dd, atom.Blockquote, atom.Td, atom.Th:
		sc.kind = Prose
	case atom.Article, atom.Main, atom.Section:
		sc.inContent = true
	}
	if !sc.inContent && attr(n, "role") == "main" {
		sc.inContent = true
	}
	if inline(n) {
		w.children(n, sc)
		return
	}
	w.flush(outer)
	if hasClass(n, "admonition-title") || hasClass(n, "sidebar-title") {
		w.flushPrefix()
		if t := inlineText(n); t != "" {
			w.prefix = t
		}
		return
	}
	id := ""
	if a == atom.Section || hasClass(n, "section") {
		if id = attr(n, "id"); id != "" {
			w.anchor = id
		}
	}
	w.children(n, sc)
	w.flush(sc.kind)
	if id != "" && w.anchor == id {
		w.anchor = ""
	}
}

// flush makes the gathered inline text one block of kind.
func (w *walker) flush(kind BlockKind) {
	if w.buf.Len() == 0 {
		return
	}
	s := proseText(w.buf.String())
	w.buf.Reset()
	if s == "" {
		return
	}
	if w.prefix != "" {
		s = label(w.prefix) + " " + s
		w.prefix = ""
	}
	w.out.add(kind, s)
}

// flushPrefix keeps a note's title that no paragraph followed.
func (w *walker) flushPrefix() {
	if w.prefix != "" {
		w.out.add(Prose, w.prefix)
		w.prefix = ""
	}
}

// label ends a note's title with a colon unless it ends in punctuation.
func label(s string) string {
	if strings.HasSuffix(s, ":") || strings.HasSuffix(s, ".") || strings.HasSuffix(s, "!") || strings.HasSuffix(s, "?") {
		return s
	}
	return s + ":"
}

func (w *walker) heading(n *html.Node, level int) {
	t := inlineText(n)
	anchor := attr(n, "id")
	if anchor == "" {
		anchor = childAnchor(n)
	}
	if anchor == "" {
		anchor = w.anchor
	}
	w.anchor = ""
	if t == "" {
		return
	}
	w.flushPrefix()
	w.out.heading(level, t, anchor)
	if level == 1 && w.h1 == "" {
		w.h1 = t
	}
}

// childAnchor is the id or name of an element inside a heading (<h2><a
// id="usage">), or "".
func childAnchor(n *html.Node) string {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode {
			continue
		}
		if id := attr(c, "id"); id != "" {
			return id
		}
		if c.DataAtom == atom.A {
			if name := attr(c, "name"); name != "" {
				return name
			}
		}
		if id := childAnchor(c); id != "" {
			return id
		}
	}
	return ""
}

func headingLevel(a atom.Atom) int {
	switch a {
	case atom.H1:
		return 1
	case atom.H2:
		return 2
	case atom.H3:
		return 3
	case atom.H4:
		return 4
	case atom.H5:
		return 5
	case atom.H6:
		return 6
	}
	return 0
}

// inline reports whether an element flows inside a paragraph. Elements
// not known to be inline, custom ones included, are blocks: two of them
// side by side never glue their words together.
func inline(n *html.Node) bool {
	if n.Namespace == "math" {
		return true
	}
	switch n.DataAtom {
	case atom.A, atom.Abbr, atom.Acronym, atom.B, atom.Bdi, atom.Bdo, atom.Big, atom.Cite, atom.Code,
		atom.Data, atom.Del, atom.Dfn, atom.Em, atom.Font, atom.I, atom.Img, atom.Ins, atom.Kbd, atom.Label,
		atom.Mark, atom.Math, atom.Nobr, atom.Q, atom.Rp, atom.Rt, atom.Ruby, atom.S, atom.Samp, atom.Small,
		atom.Span, atom.Strike, atom.Strong, atom.Sub, atom.Sup, atom.Time, atom.Tt, atom.U, atom.Var, atom.Wbr:
		return true
	}
	return false
}

// inlineText is the text of n on one line: blocks inside it are separated
// by a space, listings flattened.
func inlineText(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			switch {
			case c.Type == html.TextNode:
				b.WriteString(c.Data)
			case c.Type != html.ElementNode || dropped(c, true):
			case inline(c):
				walk(c)
			default:
				b.WriteByte(' ')
				walk(c)
				b.WriteByte(' ')
			}
		}
	}
	walk(n)
	return proseText(b.String())
}

// preText is a listing's text, verbatim.
func preText(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			switch {
			case c.Type == html.TextNode:
				b.WriteString(c.Data)
			case c.Type != html.ElementNode || dropped(c, true):
			case c.DataAtom == atom.Br:
				b.WriteByte('\n')
			default:
				walk(c)
			}
		}
	}
	walk(n)
	return codeText(b.String())
}

// pageTitle is the text of the document's <title>.
func pageTitle(doc *html.Node) string {
	var find func(*html.Node) *html.Node
	find = func(n *html.Node) *html.Node {
		if n.Type == html.ElementNode && n.DataAtom == atom.Title && n.Namespace == "" {
			return n
		}
		if n.Type == html.ElementNode && n.DataAtom == atom.Svg {
			return nil
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if t := find(c); t != nil {
				return t
			}
		}
		return nil
	}
	t := find(doc)
	if t == nil || t.FirstChild == nil {
		return ""
	}
	return proseText(t.FirstChild.Data)
}
