package eventcatalog

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/invopop/jsonschema"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/audit"
)

// Type is one entry of the catalog: an event type, its versions, its
// payload's schema and, once WithLog has added them, its figures in the
// log.
type Type struct {
	// Type is the event type's name, as stored with every event.
	Type string `json:"type"`
	// GoType is the Go type the registry decodes it into.
	GoType string `json:"go_type,omitempty"`
	// Description is the Go type's doc comment.
	Description string `json:"description,omitempty"`
	// SchemaVersion is the current schema version: what new events are
	// written at.
	SchemaVersion int `json:"schema_version"`
	// UpcastFrom lists the older schema versions the registry upcasts to
	// SchemaVersion on every read (empty for a type still at version 1).
	UpcastFrom []int `json:"upcast_from"`
	// HandlerVersion is the schema version a handler receives: a
	// projection, built-in or SQL, a command reading a stream, an upcast
	// export. Every read decodes through the registry, so it is always
	// SchemaVersion, whatever version an event was stored at.
	HandlerVersion int `json:"handler_version"`
	// Registered is false for a type found in the log that this build's
	// registry does not know (readers skip it).
	Registered bool `json:"registered"`
	// Fields lists the payload's fields, nested ones by their dotted path.
	Fields []Field `json:"fields,omitempty"`
	// Schema is the payload's JSON Schema (draft 2020-12) at
	// SchemaVersion.
	Schema *jsonschema.Schema `json:"schema,omitempty"`

	// Events is how many events of the type the log holds.
	Events int64 `json:"events"`
	// FirstPosition and LastPosition are the log positions of its first
	// and last events (absent when there are none).
	FirstPosition uint64     `json:"first_position,omitempty"`
	LastPosition  uint64     `json:"last_position,omitempty"`
	FirstAt       *time.Time `json:"first_at,omitempty"`
	LastAt        *time.Time `json:"last_at,omitempty"`
}

// Field is one field of a payload, flattened from its schema: Path is its
// JSON path from the payload's root ("costs.prompt_tokens", "rows[].apn").
type Field struct {
	Path        string `json:"path"`
	Type        string `json:"type"`
	Required    bool   `json:"required"`
	Description string `json:"description,omitempty"`
}

// embeddedDocuments names fields that hold a JSON document of another Go
// type than their own (a json.RawMessage kept byte for byte): the
// catalog describes them by that type.
var embeddedDocuments = map[string]any{
	"github.com/arr-dev/arr/domain/audit.CompletionRecorded.Payload": audit.Completion{},
}

// Build returns the catalog of every type reg holds, sorted by name, with
// descriptions from docs. It has no log figures yet (see WithLog).
func Build(reg *domain.Registry, docs Docs) ([]Type, error) {
	r := &jsonschema.Reflector{
		ExpandedStruct: true,
		Anonymous:      true,
		LookupComment: func(t reflect.Type, field string) string {
			return describe(docs, t, field)
		},
		Mapper: func(t reflect.Type) *jsonschema.Schema {
			if t == reflect.TypeFor[uuid.UUID]() {
				return &jsonschema.Schema{Type: "string", Format: "uuid"}
			}
			return nil
		},
	}
	var out []Type
	for _, name := range reg.Types() {
		e := reg.New(name)
		rt := reflect.TypeOf(e)
		for rt.Kind() == reflect.Pointer {
			rt = rt.Elem()
		}
		s := r.ReflectFromType(rt)
		if err := embedDocuments(r, rt, s); err != nil {
			return nil, fmt.Errorf("event %s: %w", name, err)
		}
		t := Type{
			Type: name, GoType: strings.TrimPrefix(rt.PkgPath(), module+"/") + "." + rt.Name(),
			Description: docs[rt.PkgPath()+"."+rt.Name()], SchemaVersion: e.SchemaVersion(),
			UpcastFrom: []int{}, HandlerVersion: e.SchemaVersion(), Registered: true, Schema: s,
		}
		for v := 1; v < e.SchemaVersion(); v++ {
			t.UpcastFrom = append(t.UpcastFrom, v)
		}
		t.Fields = flatten(s, s, "", nil)
		out = append(out, t)
	}
	return out, nil
}

const module = "github.com/arr-dev/arr"

// describe returns the doc comment of type t, or of its field: the
// field's own, else that of the field's named type (account.Plan,
// answer.Costs).
func describe(docs Docs, t reflect.Type, field string) string {
	k := t.PkgPath() + "." + t.Name()
	if field == "" {
		return docs[k]
	}
	if d := docs[k+"."+field]; d != "" {
		return d
	}
	f, ok := t.FieldByName(field)
	if !ok {
		return ""
	}
	ft := f.Type
	for ft.Kind() == reflect.Pointer || ft.Kind() == reflect.Slice && ft.Name() == "" {
		ft = ft.Elem()
	}
	if ft.PkgPath() == "" || ft.Name() == "" {
		return ""
	}
	return docs[ft.PkgPath()+"."+ft.Name()]
}

// embedDocuments replaces the schema of each field of rt named in
// embeddedDocuments with its document type's, keeping the field's own
// description.
func embedDocuments(r *jsonschema.Reflector, rt reflect.Type, s *jsonschema.Schema) error {
	for i := range rt.NumField() {
		f := rt.Field(i)
		doc, ok := embeddedDocuments[rt.PkgPath()+"."+rt.Name()+"."+f.Name]
		if !ok {
			continue
		}
		key, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		prop, ok := s.Properties.Get(key)
		if !ok {
			return fmt.Errorf("field %s has no property %q", f.Name, key)
		}
		sub := r.ReflectFromType(reflect.TypeOf(doc))
		sub.Version = ""
		for k, d := range sub.Definitions {
			s.Definitions[k] = d
		}
		sub.Definitions = nil
		if prop.Description != "" {
			sub.Description = prop.Description
		}
		s.Properties.Set(key, sub)
	}
	return nil
}

// flatten lists the fields of object schema s (resolving $refs in root's
// $defs), nested ones by path.
func flatten(root, s *jsonschema.Schema, prefix string, seen []string) []Field {
	var out []Field
	if s.Properties == nil {
		return nil
	}
	for p := s.Properties.Oldest(); p != nil; p = p.Next() {
		path := prefix + p.Key
		prop, desc := resolve(root, p.Value)
		if desc == "" {
			desc = prop.Description
		}
		f := Field{Path: path, Type: typeOf(root, prop), Required: slices.Contains(s.Required, p.Key), Description: desc}
		out = append(out, f)
		switch {
		case prop.Type == "object" && prop.Properties != nil:
			out = append(out, flatten(root, prop, path+".", seen)...)
		case prop.Type == "array" && prop.Items != nil:
			item, _ := resolve(root, prop.Items)
			if item.Type == "object" && item.Properties != nil && !slices.Contains(seen, p.Value.Ref+item.Ref) {
				out = append(out, flatten(root, item, path+"[].", append(seen, p.Value.Ref+item.Ref))...)
			}
		}
	}
	return out
}

// resolve follows a $ref into root's $defs; desc is the description at
// the referring place, which wins over the type's.
func resolve(root, s *jsonschema.Schema) (_ *jsonschema.Schema, desc string) {
	desc = s.Description
	for i := 0; s.Ref != "" && i < 8; i++ {
		d, ok := root.Definitions[strings.TrimPrefix(s.Ref, "#/$defs/")]
		if !ok {
			break
		}
		s = d
	}
	return s, desc
}

// typeOf names a schema's type for a person: "string (date-time)",
// "array of string", "object".
func typeOf(root, s *jsonschema.Schema) string {
	switch {
	case s.Type == "array" && s.Items != nil:
		item, _ := resolve(root, s.Items)
		return "array of " + typeOf(root, item)
	case s.Type == "object" && s.AdditionalProperties != nil && s.Properties == nil:
		v, _ := resolve(root, s.AdditionalProperties)
		return "map of " + typeOf(root, v)
	case s.Type == "":
		return "any JSON"
	case s.Format != "":
		return s.Type + " (" + s.Format + ")"
	case s.ContentEncoding != "":
		return s.Type + " (" + s.ContentEncoding + ")"
	}
	return s.Type
}

// JSONSchema returns t's schema as JSON, for printing.
func (t Type) JSONSchema() ([]byte, error) {
	if t.Schema == nil {
		return nil, nil
	}
	return json.MarshalIndent(t.Schema, "", "  ")
}
