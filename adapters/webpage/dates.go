package webpage

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// dateLayout is a published date's layout, an RFC 3339 full-date.
const dateLayout = "2006-01-02"

// Bounds of a believable date: nothing before the web, nothing more than
// a day in the future of the clock (a page cannot be published later).
var earliestDate = time.Date(1990, 1, 1, 0, 0, 0, 0, time.UTC)

// htmlDate is the date an HTML page states, in this order: <meta
// property="article:published_time"> (or name=), JSON-LD datePublished,
// then dateModified, then the first <time datetime>. "" when none parses.
func htmlDate(doc *html.Node) string {
	var meta, ldPublished, ldModified, timeEl string
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch n.DataAtom {
			case atom.Meta:
				if meta == "" {
					key := strings.ToLower(attr(n, "property"))
					if key == "" {
						key = strings.ToLower(attr(n, "name"))
					}
					if key == "article:published_time" {
						meta = parseDate(attr(n, "content"))
					}
				}
			case atom.Script:
				if strings.EqualFold(strings.TrimSpace(attr(n, "type")), "application/ld+json") && n.FirstChild != nil && n.FirstChild.Type == html.TextNode {
					p, m := jsonLDDates(n.FirstChild.Data)
					if ldPublished == "" {
						ldPublished = p
					}
					if ldModified == "" {
						ldModified = m
					}
				}
			case atom.Time:
				if timeEl == "" {
					timeEl = parseDate(attr(n, "datetime"))
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	for _, d := range []string{meta, ldPublished, ldModified, timeEl} {
		if d != "" {
			return d
		}
	}
	return ""
}

// jsonLDDates finds datePublished and dateModified in a JSON-LD script:
// an object, an array of them, or an @graph, searched to a bounded depth.
func jsonLDDates(src string) (published, modified string) {
	var v any
	if len(src) > 1<<20 || json.Unmarshal([]byte(src), &v) != nil {
		return "", ""
	}
	var visit func(v any, depth int)
	visit = func(v any, depth int) {
		if depth > 8 {
			return
		}
		switch x := v.(type) {
		case map[string]any:
			if s, ok := x["datePublished"].(string); ok && published == "" {
				published = parseDate(s)
			}
			if s, ok := x["dateModified"].(string); ok && modified == "" {
				modified = parseDate(s)
			}
			for _, k := range []string{"@graph", "mainEntity", "mainEntityOfPage"} {
				if c, ok := x[k]; ok {
					visit(c, depth+1)
				}
			}
		case []any:
			for _, c := range x {
				visit(c, depth+1)
			}
		}
	}
	visit(v, 0)
	return published, modified
}

// parseDate reads a date as pages write it: RFC 3339 with or without a
// time or offset, or a bare YYYY-MM-DD; it returns the UTC date
// "YYYY-MM-DD", or "" for anything else or a date out of bounds.
func parseDate(s string) string {
	s = strings.TrimSpace(s)
	if len(s) < len(dateLayout) || len(s) > 64 {
		return ""
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05Z0700", "2006-01-02T15:04:05", "2006-01-02T15:04Z07:00", "2006-01-02T15:04", "2006-01-02 15:04:05", dateLayout} {
		if t, err := time.Parse(layout, s); err == nil {
			return inBounds(t)
		}
	}
	return ""
}

// httpDate reads a Last-Modified header (RFC 7231 formats) as a UTC date,
// or "".
func httpDate(s string) string {
	if s = strings.TrimSpace(s); s == "" {
		return ""
	}
	t, err := http.ParseTime(s)
	if err != nil {
		return ""
	}
	return inBounds(t)
}

// inBounds is t's UTC date unless it is before 1990 or more than a day
// ahead of the clock.
func inBounds(t time.Time) string {
	t = t.UTC()
	if t.Before(earliestDate) || t.After(time.Now().Add(24*time.Hour)) {
		return ""
	}
	return t.Format(dateLayout)
}
