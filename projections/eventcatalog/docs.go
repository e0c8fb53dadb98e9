package eventcatalog

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"github.com/arr-dev/arr/domain"
)

// Docs maps a Go type ("import/path.Type") or a struct field
// ("import/path.Type.Field") to its doc comment, one paragraph a line.
type Docs map[string]string

//go:embed fielddocs.json
var embeddedDocs []byte

// EmbeddedDocs returns the doc comments extracted from domain/ when the
// binary was built (fielddocs.json). Each call returns a fresh map.
func EmbeddedDocs() (Docs, error) {
	var d Docs
	if err := json.Unmarshal(embeddedDocs, &d); err != nil {
		return nil, fmt.Errorf("reading the embedded field docs: %w", err)
	}
	return d, nil
}

// Extract reads the doc comments of every exported type and struct field
// in the Go files under dir (tests and testdata left out), whose import
// path is importPath. A type's comment is its own or, for a lone type, its
// declaration's; a field's is the comment above it or at its line's end.
func Extract(dir, importPath string) (Docs, error) {
	d := Docs{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			if e.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
		if err != nil {
			return fmt.Errorf("extracting doc comments: %w", err)
		}
		rel, err := filepath.Rel(dir, filepath.Dir(p))
		if err != nil {
			return err
		}
		collect(d, path.Join(importPath, filepath.ToSlash(rel)), f)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}

func collect(d Docs, pkg string, f *ast.File) {
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.TYPE {
			continue
		}
		for _, spec := range gd.Specs {
			ts := spec.(*ast.TypeSpec)
			if !ts.Name.IsExported() {
				continue
			}
			doc := ts.Doc
			if doc == nil && len(gd.Specs) == 1 {
				doc = gd.Doc
			}
			name := pkg + "." + ts.Name.Name
			if txt := clean(doc); txt != "" {
				d[name] = txt
			}
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				continue
			}
			for _, fld := range st.Fields.List {
				txt := clean(fld.Doc)
				if txt == "" {
					txt = clean(fld.Comment)
				}
				if txt == "" {
					continue
				}
				for _, n := range fld.Names {
					if n.IsExported() {
						d[name+"."+n.Name] = txt
					}
				}
			}
		}
	}
}

// clean joins a comment's lines into paragraphs, one a line.
func clean(g *ast.CommentGroup) string {
	if g == nil {
		return ""
	}
	var paras []string
	for _, p := range strings.Split(strings.TrimSpace(g.Text()), "\n\n") {
		if p = strings.Join(strings.Fields(p), " "); p != "" {
			paras = append(paras, p)
		}
	}
	return strings.Join(paras, "\n")
}

// JSON encodes the docs as fielddocs.json holds them: sorted keys, one a
// line.
func (d Docs) JSON() []byte {
	keys := make([]string, 0, len(d))
	for k := range d {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("{\n")
	for i, k := range keys {
		kj, _ := json.Marshal(k)
		vj, _ := json.Marshal(d[k])
		fmt.Fprintf(&b, "  %s: %s", kj, vj)
		if i < len(keys)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("}\n")
	return []byte(b.String())
}

// For returns the part of d that describes the event types of reg: the
// types their payloads reach (fields, elements, embedded documents) and
// those types' fields. Comments elsewhere in domain/ do not belong in
// the catalog, and changing them leaves it as it is.
func (d Docs) For(reg *domain.Registry) Docs {
	out := Docs{}
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
			if t.Name() != "" {
				break
			}
			t = t.Elem()
		}
		if seen[t] || t.PkgPath() == "" {
			return
		}
		seen[t] = true
		k := t.PkgPath() + "." + t.Name()
		if v, ok := d[k]; ok {
			out[k] = v
		}
		if t.Kind() != reflect.Struct {
			return
		}
		for i := range t.NumField() {
			f := t.Field(i)
			if v, ok := d[k+"."+f.Name]; ok {
				out[k+"."+f.Name] = v
			}
			if doc, ok := embeddedDocuments[k+"."+f.Name]; ok {
				walk(reflect.TypeOf(doc))
			}
			walk(f.Type)
		}
	}
	for _, name := range reg.Types() {
		walk(reflect.TypeOf(reg.New(name)))
	}
	return out
}
