package researchtest

import (
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
)

// Article is one page of the stand-in web site.
type Article struct {
	Slug, Title string
	Paragraphs  []string
}

// Articles is the stand-in site's content: encyclopedia-style pages about
// tides and the Moon, written for these tests.
var Articles = []Article{
	{"tides", "How tides work", []string{
		"Tides are the regular rise and fall of the sea surface. They are caused mainly by the gravitational pull of the Moon on the oceans, with a smaller contribution from the Sun.",
		"Most coasts see two high tides and two low tides every lunar day, which lasts about 24 hours and 50 minutes.",
		"When the Sun and the Moon line up, at new and full moon, their pulls add and produce spring tides with the largest range.",
	}},
	{"neap-tides", "Neap tides", []string{
		"Neap tides happen when the Sun and the Moon pull at right angles to each other, at the first and third quarter of the Moon.",
		"During neap tides the difference between high and low water is smallest, because the Sun's pull partly cancels the Moon's.",
	}},
	{"moon-orbit", "The orbit of the Moon", []string{
		"The Moon orbits the Earth once every 27.3 days relative to the stars. Its gravity raises a bulge of water on the side of the Earth facing it and another on the far side.",
		"As the Earth rotates through these two bulges, a coast passes through two high tides a day.",
	}},
	{"fundy", "The Bay of Fundy", []string{
		"The Bay of Fundy in Canada has the largest tidal range in the world, up to 16 metres.",
		"Its shape and length make the water in the bay resonate with the tide, which amplifies the range greatly.",
	}},
	{"bread", "Why bread rises", []string{
		"Bread rises because yeast ferments the sugars in dough and releases carbon dioxide gas.",
		"Gluten, a network of proteins formed by kneading wheat flour with water, traps the gas so the dough expands.",
	}},
}

// Web is the stand-in web site.
type Web struct {
	*httptest.Server
	hits atomic.Int64
	mu   sync.Mutex
	path map[string]int
}

// NewWeb starts the site; it stops when the test ends.
func NewWeb(t Cleaner) *Web {
	w := &Web{path: map[string]int{}}
	w.Server = httptest.NewServer(http.HandlerFunc(w.serve))
	t.Cleanup(w.Close)
	return w
}

// URL returns the absolute URL of an article.
func (w *Web) URL(slug string) string { return w.Server.URL + "/wiki/" + slug }

// Hits is how many pages were requested.
func (w *Web) Hits() int64 { return w.hits.Load() }

func (w *Web) serve(rw http.ResponseWriter, r *http.Request) {
	w.hits.Add(1)
	w.mu.Lock()
	w.path[r.URL.Path]++
	w.mu.Unlock()
	slug := strings.TrimPrefix(r.URL.Path, "/wiki/")
	for _, a := range Articles {
		if a.Slug == slug {
			rw.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(rw, Page(a))
			return
		}
	}
	http.NotFound(rw, r)
}

// Page renders an article the way real sites do: a navigation bar, a
// sidebar with a newsletter box, the article, related links and a footer.
func Page(a Article) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>%s - Ocean Encyclopedia</title></head><body>
<header><a href="/">Ocean Encyclopedia</a><nav><ul><li><a href="/">Home</a></li><li><a href="/shop">Shop posters and mugs</a></li><li><a href="/login">Log in</a></li></ul></nav></header>
<aside class="sidebar"><h3>Newsletter</h3><p>Subscribe to our weekly newsletter for more ocean facts!</p><form><input name="email"><button>Subscribe</button></form></aside>
<main><article><h1>%s</h1>
`, html.EscapeString(a.Title), html.EscapeString(a.Title))
	for _, p := range a.Paragraphs {
		fmt.Fprintf(&b, "<p>%s</p>\n", html.EscapeString(p))
	}
	b.WriteString(`</article>
<section class="related"><h2>Related</h2><ul><li><a href="/wiki/tides">Tides</a></li><li><a href="/wiki/moon-orbit">Moon</a></li></ul></section></main>
<footer><p>Copyright 2025 Ocean Encyclopedia. All rights reserved. Privacy policy. Cookie settings. Terms of use.</p></footer>
</body></html>`)
	return b.String()
}

// Boilerplate is text of every page that is not article text.
var Boilerplate = []string{"Shop posters and mugs", "weekly newsletter", "All rights reserved", "Cookie settings"}
