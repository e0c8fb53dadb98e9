package research

import (
	"sort"
	"strconv"
	"strings"

	"github.com/arr-dev/arr/adapters/webpage"
	"github.com/arr-dev/arr/domain/answer"
)

// sectionsOf is a page's text as sections: its paragraphs (blank-line
// separated) as prose blocks of one section.
func sectionsOf(text string) []answer.Section {
	var blocks []answer.Block
	for _, para := range strings.Split(text, "\n\n") {
		if para = strings.TrimSpace(para); para != "" {
			blocks = append(blocks, answer.Block{Kind: answer.Prose, Text: para})
		}
	}
	if len(blocks) == 0 {
		return nil
	}
	return []answer.Section{{Blocks: blocks}}
}

// rankPassages cuts the documents into passages (answer.Passages), indexes
// them together and returns the passages matching query, best first; a
// document that several searches found has its passages' scores raised.
func rankPassages(query string, docs []document) ([]Scored, *Index) {
	var ps []answer.IndexedPassage
	for i, d := range docs {
		id := strconv.Itoa(i)
		secs := d.sections
		if secs == nil {
			secs = sectionsOf(d.text)
		}
		for _, p := range answer.Passages(answer.DocumentIndexed{DocID: id, Sections: secs}) {
			ps = append(ps, answer.IndexedPassage{Passage: p, Title: d.title, URL: d.url, Published: d.published})
		}
	}
	idx := BuildIndex(ps, 0, DefaultWeights)
	ranked := idx.Search(query, len(ps))
	for i := range ranked {
		d, _ := strconv.Atoi(ranked[i].DocID)
		ranked[i].Score *= 1 + 0.5*float64(docs[d].foundBy-1)
	}
	sort.SliceStable(ranked, func(a, b int) bool { return ranked[a].Score > ranked[b].Score })
	return ranked, idx
}

// Sections turns an extracted page into the sections of a document.
func Sections(p webpage.Page) []answer.Section {
	out := make([]answer.Section, 0, len(p.Sections))
	for _, s := range p.Sections {
		as := answer.Section{Heading: s.Heading, Anchor: s.Anchor, Blocks: make([]answer.Block, 0, len(s.Blocks))}
		for _, b := range s.Blocks {
			as.Blocks = append(as.Blocks, answer.Block{Kind: answer.BlockKind(b.Kind), Text: b.Text})
		}
		out = append(out, as)
	}
	return out
}
