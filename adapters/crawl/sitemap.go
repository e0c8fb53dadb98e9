package crawl

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"

	"golang.org/x/net/html/charset"
)

// sitemap is a parsed sitemap: its page URLs (<urlset>) or, for a sitemap
// index, its sitemaps' URLs.
type sitemap struct {
	index bool
	locs  []string
}

// parseSitemap reads a sitemap (https://www.sitemaps.org/protocol.html):
// the <loc> of every <url> of a <urlset>, or of every <sitemap> of a
// <sitemapindex>. Any namespace and any declared encoding are accepted.
func parseSitemap(body []byte) (sitemap, error) {
	d := xml.NewDecoder(bytes.NewReader(body))
	d.CharsetReader = charset.NewReaderLabel // ISO-8859-1 and the rest, as declared
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return sitemap{}, errors.New("not a sitemap: no root element")
		}
		if err != nil {
			return sitemap{}, fmt.Errorf("not a sitemap: %w", err)
		}
		start, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		var doc struct {
			URLs []struct {
				Loc string `xml:"loc"`
			} `xml:"url"`
			Sitemaps []struct {
				Loc string `xml:"loc"`
			} `xml:"sitemap"`
		}
		switch start.Name.Local {
		case "urlset", "sitemapindex":
		default:
			return sitemap{}, fmt.Errorf("not a sitemap: the root element is <%s>, not <urlset> or <sitemapindex>", start.Name.Local)
		}
		if err := d.DecodeElement(&doc, &start); err != nil {
			return sitemap{}, fmt.Errorf("reading the sitemap: %w", err)
		}
		sm := sitemap{index: start.Name.Local == "sitemapindex"}
		entries := doc.URLs
		if sm.index {
			entries = doc.Sitemaps
		}
		for _, e := range entries {
			if loc := strings.TrimSpace(e.Loc); loc != "" {
				sm.locs = append(sm.locs, loc)
			}
		}
		return sm, nil
	}
}
