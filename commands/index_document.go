package commands

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/answer"
	"github.com/arr-dev/arr/domain/catalog"
	"github.com/arr-dev/arr/domain/text"
	"github.com/arr-dev/arr/eventstore"
)

// IndexDocument adds a document to the answer service's local index, or
// updates it. Origin is the absolute http(s) URL it was read from (after
// redirects) or, for a local file, its absolute path (URL empty: the
// answer service serves it at /docs/{doc_id}).
type IndexDocument struct {
	URL      string
	Origin   string
	Title    string
	Sections []answer.Section
	// Published is the document's date, "YYYY-MM-DD" (webpage.Page's
	// Published), or "".
	Published string
	Metadata  eventstore.Metadata
}

// Indexed says what IndexDocument did.
type Indexed struct {
	DocID string `json:"doc_id"`
	// Outcome is "added", "updated" or "unchanged".
	Outcome  string `json:"outcome"`
	Passages int    `json:"passages"`
	Position uint64 `json:"position,omitempty"`
}

// IndexDocumentHandler handles IndexDocument: it appends DocumentIndexed to
// the document's stream unless the stream's last version has the same
// content hash. Safe for concurrent use.
type IndexDocumentHandler struct {
	store Appender
	clock Clock
	reg   *domain.Registry
}

// NewIndexDocumentHandler refuses nil dependencies.
func NewIndexDocumentHandler(store Appender, clock Clock) (*IndexDocumentHandler, error) {
	if store == nil || clock == nil {
		return nil, errors.New("index document: nil dependency")
	}
	return &IndexDocumentHandler{store: store, clock: clock, reg: catalog.Registry()}, nil
}

// errEmptyDocument: nothing to index.
var errEmptyDocument = domain.Invalid("document_empty", "document", "the document has no text to index")

// Handle indexes the document.
func (h *IndexDocumentHandler) Handle(ctx context.Context, c IndexDocument) (Indexed, error) {
	if c.URL != "" {
		u, err := url.Parse(c.URL)
		if err != nil || !u.IsAbs() || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return Indexed{}, domain.Invalid("invalid_url", "url", "a document's URL must be an absolute http(s) URL; got %q", c.URL)
		}
		c.Origin = c.URL
	}
	if c.Origin == "" {
		return Indexed{}, domain.Invalid("origin_required", "origin", "a document needs the URL or the path it was read from")
	}
	if err := text.Check("url", c.URL, 2000); err != nil {
		return Indexed{}, err
	}
	if c.Published != "" {
		if _, err := time.Parse(answer.DateLayout, c.Published); err != nil {
			return Indexed{}, domain.Invalid("invalid_published", "published", "a document's date must be YYYY-MM-DD; got %q", c.Published)
		}
	}
	d := answer.DocumentIndexed{DocID: answer.DocID(c.Origin), URL: c.URL, Origin: text.Clean(c.Origin), Title: cleanLine(c.Title), Published: c.Published}
	for _, s := range c.Sections {
		cs := answer.Section{Anchor: cleanLine(s.Anchor)}
		for _, hd := range s.Heading {
			if hd = cleanLine(hd); hd != "" {
				cs.Heading = append(cs.Heading, hd)
			}
		}
		for _, b := range s.Blocks {
			if t := text.Clean(b.Text); strings.TrimSpace(t) != "" {
				cs.Blocks = append(cs.Blocks, answer.Block{Kind: b.Kind, Text: t})
			}
		}
		if len(cs.Blocks) > 0 {
			d.Sections = append(d.Sections, cs)
		}
	}
	passages := len(answer.Passages(d))
	if passages == 0 {
		return Indexed{DocID: d.DocID}, errEmptyDocument
	}
	if d.Title == "" {
		d.Title = d.Origin
	}
	d.Title = answer.IndexTitle(d.Title)
	d.ContentHash = answer.ContentHash(d.Title, d.Sections)
	stream := answer.DocumentStreamID(d.DocID)
	last, err := h.store.ReadStream(ctx, stream, eventstore.ReadStreamOptions{Backward: true, FromEnd: true, Limit: 1})
	if err != nil {
		return Indexed{}, fmt.Errorf("reading %s: %w", stream, err)
	}
	res := Indexed{DocID: d.DocID, Outcome: "added", Passages: passages}
	expected := eventstore.NoStream()
	if len(last) == 1 {
		prev, err := domain.DecodeAs[*answer.DocumentIndexed](h.reg, last[0].Type, last[0].SchemaVersion, last[0].Data)
		if err != nil {
			return Indexed{}, fmt.Errorf("reading the indexed version of %s: %w", d.Origin, err)
		}
		if prev.ContentHash == d.ContentHash && prev.URL == d.URL && prev.Published == d.Published {
			res.Outcome = "unchanged"
			return res, nil
		}
		res.Outcome = "updated"
		expected = eventstore.Exact(last[0].StreamVersion)
	}
	d.IndexedAt = h.clock().UTC()
	ne, err := eventstore.Encode(d, c.Metadata)
	if err != nil {
		return Indexed{}, err
	}
	ar, err := h.store.Append(ctx, stream, expected, ne)
	if err != nil {
		return Indexed{}, fmt.Errorf("recording %s: %w", d.Origin, err)
	}
	res.Position = ar.LastPosition
	return res, nil
}

// cleanLine is one line of text from the world: cleaned, white space
// collapsed.
func cleanLine(s string) string { return strings.Join(strings.Fields(text.Clean(s)), " ") }
