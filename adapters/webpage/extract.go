package webpage

import (
	"bytes"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	readability "codeberg.org/readeck/go-readability/v2"
)

// Page is a page's main text.
type Page struct {
	URL   string
	Title string
	Text  string
}

var blankLines = regexp.MustCompile(`\n{3,}`)

// Extract returns the main text of a fetched page: for HTML, what
// readability keeps of it; plain text and Markdown as they are.
func Extract(r Raw) (Page, error) {
	p := Page{URL: r.URL}
	switch r.ContentType {
	case "text/plain", "text/markdown":
		p.Text = strings.TrimSpace(string(r.Body))
		p.Title = firstLine(p.Text)
		return p, nil
	}
	base, err := url.Parse(r.URL)
	if err != nil {
		return Page{}, fmt.Errorf("extracting %s: %w", r.URL, err)
	}
	art, err := readability.FromReader(bytes.NewReader(r.Body), base)
	if err != nil {
		return Page{}, fmt.Errorf("extracting %s: %w", r.URL, err)
	}
	var b strings.Builder
	if err := art.RenderText(&b); err != nil {
		return Page{}, fmt.Errorf("extracting %s: %w", r.URL, err)
	}
	p.Title = strings.TrimSpace(art.Title())
	p.Text = strings.TrimSpace(blankLines.ReplaceAllString(b.String(), "\n\n"))
	if p.Text == "" {
		return Page{}, fmt.Errorf("extracting %s: no readable text", r.URL)
	}
	return p, nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	line = strings.TrimSpace(strings.TrimLeft(line, "# "))
	if len(line) > 120 {
		line = line[:120]
	}
	return line
}
