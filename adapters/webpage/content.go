package webpage

import (
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// mainContent picks the element that holds the page's text: the first
// <main>, else the first [role=main], else the one <article> (or the one
// holding most of the articles' text), else Sphinx's div.body or
// div.document, else the body. A main element or role is the page's own
// word; a guessed pick holding less than a fifth of the body's text (an
// article that is a comment, an empty div.body) gives way to the body. inContent says whether the pick is itself
// content (anything but the body), where headers and footers are kept.
func mainContent(doc *html.Node) (root *html.Node, inContent bool) {
	var body, mainEl, roleMain, divBody, divDocument *html.Node
	var articles []*html.Node
	var find func(n *html.Node, inArticle bool)
	find = func(n *html.Node, inArticle bool) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode {
				continue
			}
			switch c.DataAtom {
			case atom.Head, atom.Script, atom.Style, atom.Template, atom.Svg, atom.Nav:
				continue
			case atom.Body:
				if body == nil {
					body = c
				}
			case atom.Main:
				if mainEl == nil && !dropped(c, true) {
					mainEl = c
				}
			case atom.Article:
				if !inArticle && !dropped(c, true) {
					articles = append(articles, c)
				}
			case atom.Div:
				if divBody == nil && hasClass(c, "body") {
					divBody = c
				}
				if divDocument == nil && hasClass(c, "document") {
					divDocument = c
				}
			}
			if roleMain == nil && attr(c, "role") == "main" && !dropped(c, true) {
				roleMain = c
			}
			find(c, inArticle || c.DataAtom == atom.Article)
		}
	}
	find(doc, false)
	if body == nil {
		return doc, false
	}
	if mainEl != nil {
		return mainEl, true
	}
	if roleMain != nil {
		return roleMain, true
	}
	pick := mainArticle(articles)
	if pick == nil {
		pick = divBody
	}
	if pick == nil {
		pick = divDocument
	}
	if pick == nil {
		return body, false
	}
	if all, some := textLen(body, false), textLen(pick, true); all-some > 2000 && some*5 < all {
		return body, false
	}
	return pick, true
}

// mainArticle is the one article, or the one holding two thirds of the
// articles' text (a page listing many posts has none). Articles inside
// articles (comments) are not among them.
func mainArticle(articles []*html.Node) *html.Node {
	switch len(articles) {
	case 0:
		return nil
	case 1:
		return articles[0]
	}
	var best *html.Node
	most, sum := 0, 0
	for _, a := range articles {
		n := textLen(a, true)
		sum += n
		if n > most {
			best, most = a, n
		}
	}
	if most*3 >= sum*2 {
		return best
	}
	return nil
}

// textLen counts the characters of the text under n that extraction
// would keep, white space aside.
func textLen(n *html.Node, inContent bool) int {
	count := 0
	var walk func(*html.Node, bool)
	walk = func(n *html.Node, inContent bool) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			switch c.Type {
			case html.TextNode:
				count += utf8.RuneCountInString(strings.TrimSpace(c.Data))
			case html.ElementNode:
				if dropped(c, inContent) {
					continue
				}
				switch c.DataAtom {
				case atom.Article, atom.Main, atom.Section:
					walk(c, true)
				default:
					walk(c, inContent)
				}
			}
		}
	}
	walk(n, inContent)
	return count
}
