package docseed

import (
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"slices"

	"github.com/arr-dev/arr/adapters/webpage"
	"github.com/arr-dev/arr/commands"
)

// maxSourceDoc is the largest document ReferenceDocs seeds: the page
// fetcher's size limit (2 MiB).
const maxSourceDoc = 2 << 20

// ReferenceDocs indexes arr's reference documents by section: every *.md at
// the top of pages (the docs package's documents, built into the binary),
// sorted by name, one document per file, named docs/NAME (served by the
// answer service at /docs/{doc_id} and cited there). A document over 2 MiB
// or one that does not parse is left out, with a warning; the others are
// still returned. Nothing is read from the working directory.
func ReferenceDocs(pages fs.FS, log *slog.Logger) []commands.IndexDocument {
	if pages == nil {
		return nil
	}
	names, err := fs.Glob(pages, "*.md")
	if err != nil { // only for a malformed pattern
		log.Warn("listing arr's reference documents to seed the local index with", "err", err)
		return nil
	}
	slices.Sort(names)
	var out []commands.IndexDocument
	for _, name := range names {
		d, err := referenceDoc(pages, name)
		if err != nil {
			log.Warn("not seeding the local index with a reference document", "doc", name, "err", err)
			continue
		}
		out = append(out, d)
	}
	return out
}

// referenceDoc reads one Markdown document of pages.
func referenceDoc(pages fs.FS, name string) (_ commands.IndexDocument, err error) {
	origin := path.Join("docs", name)
	b, err := fs.ReadFile(pages, name)
	if err != nil {
		return commands.IndexDocument{}, fmt.Errorf("reading %s: %w", origin, err)
	}
	if len(b) > maxSourceDoc {
		return commands.IndexDocument{}, fmt.Errorf("%s is larger than %d bytes", origin, maxSourceDoc)
	}
	p, err := webpage.Extract(webpage.Raw{URL: "file:///" + origin, ContentType: "text/markdown", Body: b})
	if err != nil {
		return commands.IndexDocument{}, fmt.Errorf("reading %s: %w", origin, err)
	}
	if p.Title == "" {
		p.Title = name
	}
	return PageDoc("", origin, p), nil
}
