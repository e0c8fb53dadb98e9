package docseed_test

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/commands/docseed"
)

// TestSourceDocsFIFODoesNotHang: a named pipe in docs/ (docs/live.md made
// by mkfifo, say a log a tool streams into) is "not a regular file" and
// must be left out like the other special files. SourceDocs opens a file
// before it looks at what it is, and open(2) of a FIFO for reading blocks
// until a writer comes: the seeding of `arr up` never ends, so the ready
// message never prints, and the seed goroutine is stuck in a system call
// that no context ends.
func TestSourceDocsFIFODoesNotHang(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "docs", "a.md"), []byte("# Ants\n\nAnts carry leaves.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "docs", "live.md")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	done := make(chan []commands.IndexDocument, 1)
	go func() { done <- docseed.SourceDocs(slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil))) }()
	select {
	case docs := <-done:
		if len(docs) != 1 || !strings.HasSuffix(docs[0].Origin, "a.md") {
			t.Errorf("seeded %d documents, want docs/a.md alone", len(docs))
		}
	case <-time.After(5 * time.Second):
		// Free the blocked open so the goroutine ends: a writer that
		// opens and closes at once gives the reader an empty file.
		if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			_ = w.Close()
		}
		<-done
		t.Fatal("SourceDocs did not return within 5s with a FIFO at docs/live.md: it blocks in open(2) until something writes to the pipe, so arr up never finishes seeding and never says it is ready")
	}
}

// TestSourceDocsSymlinkOutOfTree: docs/*.md are arr's documentation, to
// be cited and served at /docs/{doc_id} (a route that takes no key; the
// id is answer.DocID of the absolute path, so it can be guessed). A symbolic
// link among them that points out of the tree (a cloned repository can
// carry docs/notes.md -> ../../.env or -> /home/u/.ssh/config) is followed,
// so a file the operator never meant to publish is indexed and served.
// SourceDocs must leave out a link whose target is outside the working
// directory.
func TestSourceDocsSymlinkOutOfTree(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "credentials.md")
	if err := os.WriteFile(secret, []byte("# Credentials\n\nOPENAI_API_KEY=sk-the-operators-private-key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(dir, "docs", "notes.md")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	docs := docseed.SourceDocs(slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil)))
	for _, d := range docs {
		for _, s := range d.Sections {
			for _, b := range s.Blocks {
				if strings.Contains(b.Text, "sk-the-operators-private-key") {
					t.Fatalf("docs/notes.md, a link to %s outside the tree, was seeded (origin %s): its text is served at /docs/{doc_id} without a key", secret, d.Origin)
				}
			}
		}
	}
}
