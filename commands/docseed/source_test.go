package docseed_test

import (
	"bytes"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/arr-dev/arr/commands/docseed"
)

// TestReferenceDocs: every *.md at the top of the documents, by name, one
// document each named docs/NAME and cut into sections under their heading
// paths; other files, subfolders and a document over 2 MiB (with a
// warning) are left out.
func TestReferenceDocs(t *testing.T) {
	pages := fstest.MapFS{
		"b.md":      {Data: []byte("# Bee\n\nBees make honey.\n")},
		"a.md":      {Data: []byte("# Ants\n\nAnts carry leaves.\n\n## Nests\n\nAnts dig nests under stones.\n")},
		"notes.txt": {Data: []byte("not Markdown\n")},
		"sub/c.md":  {Data: []byte("# In a subfolder\n\nNot seeded.\n")},
		"big.md":    {Data: []byte("# Big\n\n" + strings.Repeat("word ", 2<<20/5+1) + "\n")},
	}
	var logs bytes.Buffer
	got := docseed.ReferenceDocs(pages, slog.New(slog.NewTextHandler(&logs, nil)))
	var origins []string
	for _, d := range got {
		origins = append(origins, d.Origin)
		if d.URL != "" {
			t.Errorf("%s has URL %q: a reference document is served and cited at /docs/{doc_id}", d.Origin, d.URL)
		}
	}
	if !slices.Equal(origins, []string{"docs/a.md", "docs/b.md"}) {
		t.Fatalf("seeded %v, want docs/a.md and docs/b.md", origins)
	}
	var paths []string
	for _, s := range got[0].Sections {
		paths = append(paths, strings.Join(s.Heading, " > "))
	}
	if !slices.Contains(paths, "Ants > Nests") {
		t.Errorf("docs/a.md's sections: %q", paths)
	}
	if !strings.Contains(logs.String(), "big.md") || !strings.Contains(logs.String(), "larger than") {
		t.Errorf("the document over 2 MiB was left out without a warning: %s", logs.String())
	}
}
