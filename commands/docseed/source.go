package docseed

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"slices"

	"github.com/arr-dev/arr/adapters/webpage"
	"github.com/arr-dev/arr/commands"
)

// maxSourceDoc is the largest file SourceDocs seeds: the page fetcher's
// size limit (2 MiB).
const maxSourceDoc = 2 << 20

// SourceDocs indexes arr's documentation by section when arr runs from its
// source tree: ./README.md, then every ./docs/*.md sorted by name, one
// document per file (served by the answer service at /docs/{doc_id} and
// cited there, as `arr answer index add FILE` does). A file that is
// missing, not a regular file, over 2 MiB or unreadable is left out; the
// others are still returned.
func SourceDocs(log *slog.Logger) []commands.IndexDocument {
	paths := []string{"README.md"}
	docs, err := filepath.Glob(filepath.Join("docs", "*.md"))
	if err != nil { // only for a malformed pattern
		log.Warn("listing docs/*.md to seed the local index with", "err", err)
	}
	slices.Sort(docs)
	paths = append(paths, docs...)
	var out []commands.IndexDocument
	for _, path := range paths {
		d, err := sourceDoc(path)
		if errors.Is(err, fs.ErrNotExist) {
			log.Debug("no such file in the working directory to seed the local index with", "file", path)
			continue
		}
		if err != nil {
			log.Warn("not seeding the local index with a file of the working directory", "file", path, "err", err)
			continue
		}
		out = append(out, d)
	}
	return out
}

// sourceDoc reads one Markdown file of the working directory as the
// document of its absolute path.
func sourceDoc(path string) (_ commands.IndexDocument, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("reading %s: %w", path, err)
		}
	}()
	abs, err := filepath.Abs(path)
	if err != nil {
		return commands.IndexDocument{}, err
	}
	f, err := os.Open(abs)
	if err != nil {
		return commands.IndexDocument{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return commands.IndexDocument{}, err
	}
	if !fi.Mode().IsRegular() {
		return commands.IndexDocument{}, fmt.Errorf("not a regular file")
	}
	b, err := io.ReadAll(io.LimitReader(f, maxSourceDoc+1))
	if err != nil {
		return commands.IndexDocument{}, err
	}
	if len(b) > maxSourceDoc {
		return commands.IndexDocument{}, fmt.Errorf("larger than %d bytes", maxSourceDoc)
	}
	p, err := webpage.Extract(webpage.Raw{URL: (&url.URL{Scheme: "file", Path: abs}).String(), ContentType: "text/markdown", Body: b})
	if err != nil {
		return commands.IndexDocument{}, err
	}
	if p.Title == "" {
		p.Title = filepath.Base(abs)
	}
	return PageDoc("", abs, p), nil
}
