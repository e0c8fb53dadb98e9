package docseed

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"log/slog"
	"sort"
	"strings"

	"github.com/arr-dev/arr/adapters/webpage"
	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/commands/research"
	"github.com/arr-dev/arr/domain/answer"
)

// Seeder fills a new local index: Index adds the documents, Count tells
// whether the index holds any, Specs are the services' OpenAPI documents,
// DataSources is the records service's data-source report (the query
// GET /api/v1/data-sources answers from; nil: none) and RecordsBase the
// base URL that report is cited by.
type Seeder struct {
	Index       *commands.IndexDocumentHandler
	Count       func(context.Context) (int64, error)
	Specs       []Spec
	DataSources func(context.Context) (any, error)
	RecordsBase string
	// Reference is arr's reference documents (the docs package's Pages,
	// built into the binary); nil: none.
	Reference fs.FS
	Log       *slog.Logger
}

// Seed fills a new local index with arr's own documentation (the three
// OpenAPI documents, one document per operation, and the reference
// documents built into the binary: ReferenceDocs), and the records
// service's data sources when that service answers. Each part is added
// once; a part that could not be read is tried again on the next start.
func (s Seeder) Seed(ctx context.Context) {
	log := s.Log
	if n, err := s.Count(ctx); err != nil || n > 0 {
		return // seeded before, or documents were added: leave the index to its owner
	}
	docs := OpenAPIDocs(s.Specs)
	docs = append(docs, ReferenceDocs(s.Reference, log)...)
	added := 0
	for _, d := range docs {
		if _, err := s.Index.Handle(ctx, d); err != nil {
			log.Warn("seeding the local search index with arr's documentation", "origin", d.Origin, "err", err)
			continue
		}
		added++
	}
	log.Info("seeded the local search index with arr's documentation", "documents", added)
	if s.DataSources == nil {
		return
	}
	report, err := s.DataSources(ctx)
	if err == nil {
		var d commands.IndexDocument
		if d, err = jsonDoc(s.RecordsBase+"/api/v1/data-sources", "Records data sources", report); err == nil {
			_, err = s.Index.Handle(ctx, d)
		}
	}
	if err != nil {
		log.Warn("seeding the local search index with the records service's data sources; it will try again on the next start", "err", err)
		return
	}
	log.Info("seeded the local search index with the records service's data sources")
}

// jsonDoc is the IndexDocument of a JSON value, flattened to prose.
func jsonDoc(url, title string, v any) (commands.IndexDocument, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return commands.IndexDocument{}, fmt.Errorf("encoding %s: %w", title, err)
	}
	var generic any
	if err := json.Unmarshal(b, &generic); err != nil {
		return commands.IndexDocument{}, fmt.Errorf("decoding %s: %w", title, err)
	}
	return TextDoc(url, "", title, Flatten(generic)), nil
}

// PageDoc is the IndexDocument of an extracted page read from url (or,
// url empty, from the local file origin).
func PageDoc(url, origin string, p webpage.Page) commands.IndexDocument {
	if origin == "" {
		origin = url
	}
	return commands.IndexDocument{URL: url, Origin: origin, Title: p.Title, Sections: research.Sections(p), Published: p.Published,
		Metadata: commands.NewMetadata("arr:answer-index", "")}
}

// TextDoc is the IndexDocument of plain text: its paragraphs as prose.
func TextDoc(url, origin, title, text string) commands.IndexDocument {
	var blocks []answer.Block
	for _, para := range strings.Split(text, "\n\n") {
		if para = strings.TrimSpace(para); para != "" {
			blocks = append(blocks, answer.Block{Kind: answer.Prose, Text: para})
		}
	}
	if origin == "" {
		origin = url
	}
	return commands.IndexDocument{URL: url, Origin: origin, Title: title, Sections: []answer.Section{{Blocks: blocks}},
		Metadata: commands.NewMetadata("arr:answer-index", "")}
}

// Flatten writes JSON as "key: value" lines for full-text search.
func Flatten(v any) string {
	var b strings.Builder
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch t := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(t))
			for k := range t {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(strings.TrimPrefix(prefix+" "+k, " "), t[k])
			}
		case []any:
			for _, e := range t {
				walk(prefix, e)
			}
			b.WriteString("\n")
		default:
			fmt.Fprintf(&b, "%s: %v\n", strings.ReplaceAll(prefix, "_", " "), t)
		}
	}
	walk("", v)
	return b.String()
}

// Spec is one service's OpenAPI document and the base URL it is served
// under.
type Spec struct {
	Service string
	Base    string
	OpenAPI func() ([]byte, error)
}

// OpenAPIDocs turns the services' OpenAPI documents into one index
// document per operation, plus each document's description.
func OpenAPIDocs(specs []Spec) []commands.IndexDocument {
	var out []commands.IndexDocument
	for _, svc := range specs {
		raw, err := svc.OpenAPI()
		if err != nil {
			continue
		}
		var doc struct {
			Info struct {
				Title, Description string
			} `json:"info"`
			Paths map[string]map[string]json.RawMessage `json:"paths"`
		}
		if json.Unmarshal(raw, &doc) != nil {
			continue
		}
		base := svc.Base + "/openapi.json"
		out = append(out, TextDoc(base, "", doc.Info.Title, doc.Info.Description))
		for path, ops := range doc.Paths {
			for method, op := range ops {
				var o struct {
					Summary, Description string
				}
				var all any
				if json.Unmarshal(op, &o) != nil || json.Unmarshal(op, &all) != nil || method == "parameters" {
					continue
				}
				ptr := "#/paths/" + strings.ReplaceAll(strings.ReplaceAll(path, "~", "~0"), "/", "~1") + "/" + method
				out = append(out, TextDoc(base+ptr, "", fmt.Sprintf("%s %s (%s service): %s", strings.ToUpper(method), path, svc.Service, o.Summary),
					strings.TrimSpace(o.Summary+".\n\n"+o.Description)))
			}
		}
	}
	return out
}
