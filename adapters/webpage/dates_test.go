package webpage_test

import (
	"strings"
	"testing"
	"time"

	"github.com/arr-dev/arr/adapters/webpage"
)

// TestPublishedDate: a page's date is what its HTML states, in order
// article:published_time, JSON-LD datePublished, dateModified, <time
// datetime>; else the Last-Modified header; else none. Hostile and
// malformed dates give none.
func TestPublishedDate(t *testing.T) {
	body := func(head, content string) string {
		return "<!doctype html><html><head><title>T</title>" + head + "</head><body><article><h1>T</h1>" + content + "<p>Some text of the page, long enough to read.</p></article></body></html>"
	}
	future := time.Now().AddDate(0, 0, 3).UTC().Format("2006-01-02")
	tests := []struct {
		name, ct, html, lastModified, want string
	}{
		{"article:published_time", "text/html", body(`<meta property="article:published_time" content="2021-06-01T08:00:00+02:00">`, `<time datetime="2019-01-01">old</time>`), "Mon, 02 Jan 2006 15:04:05 GMT", "2021-06-01"},
		{"meta name= and upper case", "text/html", body(`<META NAME="Article:Published_Time" CONTENT="2021-06-01">`, ""), "", "2021-06-01"},
		{"an offset moves the UTC date", "text/html", body(`<meta property="article:published_time" content="2021-06-01T23:30:00-05:00">`, ""), "", "2021-06-02"},
		{"JSON-LD datePublished", "text/html", body(`<script type="application/ld+json">{"@context":"https://schema.org","@type":"Article","datePublished":"2022-02-03T10:00:00Z","dateModified":"2023-01-01"}</script>`, ""), "", "2022-02-03"},
		{"JSON-LD dateModified", "text/html", body(`<script type="application/ld+json">{"@type":"WebPage","dateModified":"2023-04-05"}</script>`, ""), "", "2023-04-05"},
		{"JSON-LD @graph", "text/html", body(`<script type="application/ld+json">{"@graph":[{"@type":"WebSite"},{"@type":"Article","datePublished":"2020-07-08"}]}</script>`, ""), "", "2020-07-08"},
		{"JSON-LD array", "text/html", body(`<script type="application/ld+json">[{"@type":"Article","datePublished":"2020-07-09"}]</script>`, ""), "", "2020-07-09"},
		{"time datetime", "text/html", body("", `<p>Posted <time datetime="2024-11-30T12:00">Nov 30</time></p>`), "", "2024-11-30"},
		{"Last-Modified", "text/html", body("", ""), "Wed, 21 Oct 2015 07:28:00 GMT", "2015-10-21"},
		{"Last-Modified of plain text", "text/plain", "Some text of a plain file.", "Sunday, 06-Nov-94 08:49:37 GMT", "1994-11-06"},
		{"none", "text/html", body("", ""), "", ""},
		{"malformed JSON-LD", "text/html", body(`<script type="application/ld+json">{"datePublished":"2020-01-01"</script>`, ""), "", ""},
		{"datePublished not a string", "text/html", body(`<script type="application/ld+json">{"datePublished":20200101}</script>`, ""), "", ""},
		{"a bad meta falls through to time", "text/html", body(`<meta property="article:published_time" content="last Tuesday">`, `<time datetime="2024-02-29">x</time>`), "", "2024-02-29"},
		{"an impossible date", "text/html", body(`<meta property="article:published_time" content="2023-02-30">`, ""), "", ""},
		{"before the web", "text/html", body(`<time datetime="0001-01-01">x</time>`, ""), "", ""},
		{"in the future", "text/html", body(`<time datetime="`+future+`">x</time>`, ""), "", ""},
		{"a huge value", "text/html", body(`<time datetime="2024-01-01`+strings.Repeat("9", 100)+`">x</time>`, ""), "", ""},
		{"a bad Last-Modified", "text/html", body("", ""), "yesterday", ""},
		{"a future Last-Modified", "text/html", body("", ""), "Fri, 01 Jan 2100 00:00:00 GMT", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := webpage.Extract(webpage.Raw{URL: "http://127.0.0.1/p", ContentType: tc.ct, Body: []byte(tc.html), LastModified: tc.lastModified})
			if err != nil {
				t.Fatal(err)
			}
			if p.Published != tc.want {
				t.Fatalf("published %q, want %q", p.Published, tc.want)
			}
		})
	}
}
