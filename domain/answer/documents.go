package answer

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"
)

// BlockKind says what a block of a document is.
type BlockKind string

// Kinds of blocks. Code is kept (it is served with the document) but never
// indexed or quoted in an answer's prose.
const (
	Prose BlockKind = "prose"
	Term  BlockKind = "term"
	Item  BlockKind = "item"
	Row   BlockKind = "row"
	Code  BlockKind = "code"
)

// Block is one piece of a section.
type Block struct {
	// Kind says what the block is.
	Kind BlockKind `json:"kind"`
	// Text is the block's text.
	Text string `json:"text"`
}

// Section is the content under one heading path.
type Section struct {
	// Heading is the heading path, outermost first.
	Heading []string `json:"heading,omitempty"`
	// Anchor is the fragment that links to the section, or "".
	Anchor string `json:"anchor,omitempty"`
	// Blocks are the section's content, in order.
	Blocks []Block `json:"blocks"`
}

// DocumentIndexed: a document was added to the local index, or changed.
// A document is identified by DocID: the same URL (or local file) indexed
// again replaces its earlier version; indexing the same content again
// records nothing.
type DocumentIndexed struct {
	// DocID identifies the document: 24 hex digits of the SHA-256 of its
	// origin.
	DocID string `json:"doc_id"`
	// URL is the absolute http(s) URL the document was read from; empty for
	// a local file, which the answer service serves itself at /docs/{DocID}.
	URL string `json:"url,omitempty"`
	// Origin is where it was read from: the URL, or the local file's path.
	Origin string `json:"origin"`
	// Title is the document's title.
	Title string `json:"title"`
	// ContentHash is the hex SHA-256 of the title and sections: an equal
	// hash means nothing to re-index.
	ContentHash string `json:"content_hash"`
	// Sections are the document's content, one per heading path.
	Sections []Section `json:"sections"`
	// IndexedAt is when the document was indexed (UTC).
	IndexedAt time.Time `json:"indexed_at"`
	// Published is the document's date, "YYYY-MM-DD": the published or
	// modified date the page states (article:published_time, <time
	// datetime>, JSON-LD datePublished/dateModified), else its HTTP
	// Last-Modified; empty when it has none (schema version 2; absent in
	// version 1).
	Published string `json:"published,omitempty"`
}

func (DocumentIndexed) EventType() string  { return "DocumentIndexed" }
func (DocumentIndexed) SchemaVersion() int { return 2 }

// Upcast implements domain.Upcaster: version 2 added Published, which a
// version 1 document did not record (absent: no date), so a version 1
// payload reads as version 2 unchanged.
func (DocumentIndexed) Upcast(from int, data []byte) ([]byte, error) {
	if from != 1 {
		return nil, fmt.Errorf("no schema version %d of DocumentIndexed", from)
	}
	return data, nil
}

// DocumentStreamID is the stream of one document's versions.
func DocumentStreamID(docID string) string { return "answerdoc-" + docID }

// DocID is the identity of a document read from origin (an absolute URL,
// or a local file's absolute path). A URL's fragment counts: a page indexed
// in parts (one OpenAPI operation each) is several documents.
func DocID(origin string) string {
	sum := sha256.Sum256([]byte(origin))
	return hex.EncodeToString(sum[:12])
}

// ContentHash is the hash of a document's title and sections: equal hashes
// mean nothing to re-index.
func ContentHash(title string, sections []Section) string {
	h := sha256.New()
	h.Write([]byte(title))
	for _, s := range sections {
		h.Write([]byte{0})
		h.Write([]byte(strings.Join(s.Heading, "\x1f")))
		h.Write([]byte{0x1e})
		h.Write([]byte(s.Anchor))
		for _, b := range s.Blocks {
			h.Write([]byte{0x1d})
			h.Write([]byte(b.Kind))
			h.Write([]byte{0x1c})
			h.Write([]byte(b.Text))
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// DocsPath is where the answer service serves a local document.
func DocsPath(docID string) string { return "/docs/" + docID }
