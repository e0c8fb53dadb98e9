package docs_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/arr-dev/arr/docs"
)

// TestPagesAreEveryDocument: the documents built into the binary are every
// docs/*.md of the source tree, byte for byte.
func TestPagesAreEveryDocument(t *testing.T) {
	onDisk, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	built, err := fs.Glob(docs.Pages(), "*.md")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(onDisk, built) || len(built) < 10 {
		t.Fatalf("built in: %v; on disk: %v", built, onDisk)
	}
	for _, name := range built {
		a, _ := fs.ReadFile(docs.Pages(), name)
		b, _ := os.ReadFile(name)
		if string(a) != string(b) {
			t.Errorf("%s differs from the one built in", name)
		}
	}
}
