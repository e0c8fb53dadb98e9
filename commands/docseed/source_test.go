package docseed_test

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/commands/docseed"
)

// TestSourceDocs: run from a source tree, SourceDocs returns README.md and
// then every docs/*.md by name, each one document named by its absolute
// path and cut into sections under their heading paths; other files, a
// folder named like a Markdown file, subfolders and a file over 2 MiB are
// left out (the last with a warning), and a tree without README.md still
// seeds its docs.
func TestSourceDocs(t *testing.T) {
	for _, tc := range []struct {
		name   string
		readme bool
		want   []string // paths under the tree, in order
	}{
		{name: "source tree", readme: true, want: []string{"README.md", "docs/a.md", "docs/b.md"}},
		{name: "no README", readme: false, want: []string{"docs/a.md", "docs/b.md"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			files := map[string]string{
				"docs/b.md":        "# Bee\n\nBees make honey.\n",
				"docs/a.md":        "# Ants\n\nAnts carry leaves.\n\n## Nests\n\nAnts dig nests under stones.\n",
				"docs/notes.txt":   "not Markdown\n",
				"docs/sub/c.md":    "# In a subfolder\n\nNot seeded.\n",
				"docs/big.md":      "# Big\n\n" + strings.Repeat("word ", 2<<20/5+1) + "\n",
				"other/d.md":       "# Elsewhere\n\nNot seeded.\n",
				"docs/dir.md/e.md": "# A folder named .md\n\nNot seeded.\n",
			}
			if tc.readme {
				files["README.md"] = "# arr\n\nOne binary.\n\n## Tests\n\nRun ./scripts/test.sh.\n"
			}
			for name, body := range files {
				path := filepath.Join(dir, filepath.FromSlash(name))
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			t.Chdir(dir)
			var logs bytes.Buffer
			docs := docseed.SourceDocs(slog.New(slog.NewTextHandler(&logs, nil)))

			var got []string
			for _, d := range docs {
				got = append(got, realPath(t, d.Origin))
			}
			var want []string
			for _, w := range tc.want {
				want = append(want, realPath(t, filepath.Join(dir, filepath.FromSlash(w))))
			}
			if !slices.Equal(got, want) {
				t.Fatalf("seeded %q, want %q", got, want)
			}
			for _, d := range docs {
				if !filepath.IsAbs(d.Origin) || d.URL != "" {
					t.Errorf("%q: URL %q, want a local file served at /docs/{doc_id} (no URL) named by its absolute path", d.Origin, d.URL)
				}
			}
			a := docs[len(docs)-2]
			if a.Title != "Ants" || !hasSection(a, []string{"Ants", "Nests"}, "Ants dig nests under stones.") {
				t.Errorf("docs/a.md: title %q, sections %+v", a.Title, a.Sections)
			}
			if tc.readme && (docs[0].Title != "arr" || !hasSection(docs[0], []string{"arr", "Tests"}, "Run ./scripts/test.sh.")) {
				t.Errorf("README.md: title %q, sections %+v", docs[0].Title, docs[0].Sections)
			}
			if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "big.md") {
				t.Errorf("no warning about the file over 2 MiB; logs:\n%s", logs.String())
			}
		})
	}
}

// hasSection says whether d has a section under heading whose text
// contains text.
func hasSection(d commands.IndexDocument, heading []string, text string) bool {
	for _, s := range d.Sections {
		if !slices.Equal(s.Heading, heading) {
			continue
		}
		for _, b := range s.Blocks {
			if strings.Contains(b.Text, text) {
				return true
			}
		}
	}
	return false
}

func realPath(t testing.TB, path string) string {
	t.Helper()
	p, err := filepath.EvalSymlinks(path)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
