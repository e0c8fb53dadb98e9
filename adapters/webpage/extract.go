package webpage

import "strings"

// Extract returns the text of a fetched page in sections under their
// headings: for HTML, the main content with navigation and other
// boilerplate dropped; Markdown by its headings, fences, lists and
// tables; plain text as paragraphs. It fails when an HTML page holds no
// text. Extract is safe for concurrent use.
//
// The page's Published date is what the HTML states (htmlDate), else the
// response's Last-Modified header, else none.
func Extract(r Raw) (Page, error) {
	var p Page
	var err error
	switch strings.ToLower(r.ContentType) {
	case "text/plain":
		p = finish(r.URL, plainText(string(r.Body)))
	case "text/markdown":
		p = finish(r.URL, markdown(string(r.Body)))
	default:
		p, err = extractHTML(r)
	}
	if err != nil {
		return Page{}, err
	}
	if p.Published == "" {
		p.Published = httpDate(r.LastModified)
	}
	return p, nil
}

// finish makes a Page of a text's outline, titled by its first heading or
// else its first line.
func finish(url string, o outline) Page {
	p := Page{URL: url, Sections: o.sections, Text: flatText(o.sections)}
	for _, s := range o.sections {
		if len(s.Heading) > 0 {
			p.Title = s.Heading[0]
			return p
		}
	}
	line, _, _ := strings.Cut(p.Text, "\n")
	if len(line) > 120 {
		line = strings.ToValidUTF8(line[:120], "")
	}
	p.Title = line
	return p
}

// plainText makes every paragraph (lines up to a blank line) a Prose
// block of one section.
func plainText(s string) outline {
	var o outline
	for _, para := range paragraphs(s) {
		o.add(Prose, proseText(para))
	}
	return o
}

// paragraphs splits s at blank lines.
func paragraphs(s string) []string {
	var out []string
	var cur []string
	for _, l := range strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n") {
		if strings.TrimSpace(l) == "" {
			if len(cur) > 0 {
				out = append(out, strings.Join(cur, "\n"))
				cur = cur[:0]
			}
			continue
		}
		cur = append(cur, l)
	}
	if len(cur) > 0 {
		out = append(out, strings.Join(cur, "\n"))
	}
	return out
}
