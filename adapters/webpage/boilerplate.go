package webpage

import (
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// dropped reports whether an element is boilerplate or invisible, so that
// it and everything in it is left out. inContent says whether n lies in
// the page's main content (an article, main, section or the chosen main
// element): there a header, footer or aside belongs to the text and is
// kept, and only the page-level boilerplate names that are never content
// (table of contents, breadcrumbs, "¶" links, cookie banners...) drop an
// element.
func dropped(n *html.Node, inContent bool) bool {
	if n.Namespace == "svg" {
		return true
	}
	switch n.DataAtom {
	case atom.Nav, atom.Script, atom.Style, atom.Noscript, atom.Form, atom.Svg, atom.Template,
		atom.Button, atom.Select, atom.Textarea, atom.Input, atom.Iframe, atom.Object, atom.Embed,
		atom.Canvas, atom.Dialog, atom.Head, atom.Title, atom.Link, atom.Meta, atom.Video, atom.Audio, atom.Map:
		return true
	case atom.Header, atom.Footer:
		if !inContent {
			return true
		}
	case atom.Aside:
		if !inContent && !noteLike(n) {
			return true
		}
	case atom.A:
		if selfLink(n) {
			return true
		}
	}
	idCheck := !sectionLike(n)
	for _, a := range n.Attr {
		switch a.Key {
		case "hidden":
			return true
		case "aria-hidden":
			if strings.EqualFold(a.Val, "true") {
				return true
			}
		case "role":
			switch strings.ToLower(strings.TrimSpace(a.Val)) {
			case "navigation", "banner", "contentinfo", "search", "complementary", "menu", "menubar", "dialog", "alertdialog":
				return true
			}
		case "summary": // DocBook's "Navigation header" tables
			if strings.HasPrefix(strings.ToLower(a.Val), "navigation") {
				return true
			}
		case "style":
			v := strings.ReplaceAll(strings.ToLower(a.Val), " ", "")
			if strings.Contains(v, "display:none") || strings.Contains(v, "visibility:hidden") {
				return true
			}
		case "class":
			if anyToken(a.Val, func(c string) bool { return boilerplateName(strings.ToLower(c), inContent) }) {
				return true
			}
		case "id":
			if idCheck && boilerplateName(strings.ToLower(a.Val), inContent) {
				return true
			}
		}
	}
	return false
}

// boilerplateName reports whether a class or id names boilerplate. The
// first names are never content; the second are dropped only outside the
// main content (a "footer" inside an article is the article's).
func boilerplateName(name string, inContent bool) bool {
	switch name {
	case "sphinxsidebar", "sphinxsidebarwrapper", "related", "headerlink", "breadcrumb", "breadcrumbs",
		"toc", "table-of-contents", "tableofcontents", "toc-wrapper", "skip-link", "skiplink", "skip-to-content",
		"skip-nav", "cookie-banner", "cookie-consent", "cookie-notice", "cookie-bar", "cookieconsent",
		"cookie-law-info-bar", "gdpr", "mw-editsection", "mw-jump-link", "sr-only", "visually-hidden",
		"screen-reader-text", "linenos", "linenodiv", "navbar", "navbox", "mobile-nav", "share", "sharing",
		"social-share", "advertisement", "ads", "edit-this-page", "prev-next", "pagination", "pager",
		"copybutton", "copy-button", "searchbox", "language-switcher", "version-switcher", "navheader", "navfooter":
		return true
	case "sidebar", "footer", "header", "site-header", "site-footer", "page-footer", "menu", "nav",
		"navigation", "masthead", "newsletter", "subscribe", "comments", "social", "banner":
		return !inContent
	}
	return false
}

// sectionLike reports whether n is a section of the document, whose id is
// its heading's slug ("navigation" for a heading "Navigation") and so
// never a sign of boilerplate.
func sectionLike(n *html.Node) bool {
	switch n.DataAtom {
	case atom.Section, atom.Article, atom.Main, atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6, atom.Dl, atom.Dt, atom.Dd, atom.Table:
		return true
	}
	return hasClass(n, "section")
}

// noteLike reports whether an aside is a footnote or a note of the text
// rather than a page's sidebar.
func noteLike(n *html.Node) bool {
	for _, a := range n.Attr {
		if a.Key == "role" && (a.Val == "note" || a.Val == "doc-footnote" || a.Val == "doc-endnotes") {
			return true
		}
		if a.Key == "class" && anyToken(strings.ToLower(a.Val), func(c string) bool {
			switch c {
			case "footnote", "footnote-list", "footnotes", "citation", "admonition", "note", "warning", "tip":
				return true
			}
			return false
		}) {
			return true
		}
	}
	return false
}

// selfLink reports whether a link is a permalink mark ("¶", "#", "§") or
// a "skip to content" link.
func selfLink(n *html.Node) bool {
	href := attr(n, "href")
	if !strings.HasPrefix(href, "#") {
		return false
	}
	t := shortText(n, 40)
	switch t {
	case "¶", "#", "§", "🔗":
		return true
	}
	t = strings.ToLower(t)
	return strings.HasPrefix(t, "skip to ") || strings.HasPrefix(t, "jump to ") || t == "skip navigation" || t == "back to top"
}

// shortText is the trimmed text of n when it has at most max bytes, else
// "".
func shortText(n *html.Node, max int) string {
	var b strings.Builder
	var walk func(*html.Node) bool
	walk = func(n *html.Node) bool {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.TextNode {
				b.WriteString(c.Data)
				if b.Len() > max {
					return false
				}
			} else if c.Type == html.ElementNode && !walk(c) {
				return false
			}
		}
		return true
	}
	if !walk(n) {
		return ""
	}
	return strings.TrimSpace(b.String())
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func hasClass(n *html.Node, class string) bool {
	for _, a := range n.Attr {
		if a.Key == "class" && anyToken(a.Val, func(c string) bool { return c == class }) {
			return true
		}
	}
	return false
}

// anyToken reports whether f holds for a token of a space-separated
// list (a class attribute), without allocating.
func anyToken(list string, f func(string) bool) bool {
	for list != "" {
		list = strings.TrimLeft(list, " \t\n\f\r")
		end := strings.IndexAny(list, " \t\n\f\r")
		if end < 0 {
			end = len(list)
		}
		if end > 0 && f(list[:end]) {
			return true
		}
		list = list[end:]
	}
	return false
}
