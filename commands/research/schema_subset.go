package research

// The closed subset of JSON Schema a response_format may use (much as
// OpenAI's structured outputs take a strict subset), checked on the
// schema's JSON before JSON Schema's library compiles it: every keyword
// is one arr knows, $ref names only "#/$defs/name" of an acyclic graph,
// and the schema expanded with its $refs inlined is at most
// maxSchemaNodes subschemas — so validating a reply costs at most about
// that many evaluations per reply value.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/text"
)

// maxSchemaNodes bounds the subschemas of a schema expanded with every
// $ref inlined (a def used twice counts twice).
const maxSchemaNodes = 5000

// keyword kinds: what a keyword's value is.
type keywordKind int

const (
	kwAnnotation keywordKind = iota // any value; the library checks its type
	kwSchema                        // one subschema
	kwSchemaMap                     // an object of subschemas
	kwSchemaList                    // an array of subschemas
	kwRef                           // "#/$defs/name"
	kwDefs                          // $defs, only at the root
)

// subsetKeywords are the keywords a response_format schema may use.
var subsetKeywords = map[string]keywordKind{
	"type": kwAnnotation, "enum": kwAnnotation, "const": kwAnnotation, "required": kwAnnotation,
	"description": kwAnnotation, "title": kwAnnotation, "format": kwAnnotation, "$schema": kwAnnotation,
	"minimum": kwAnnotation, "maximum": kwAnnotation, "exclusiveMinimum": kwAnnotation, "exclusiveMaximum": kwAnnotation,
	"multipleOf": kwAnnotation, "minLength": kwAnnotation, "maxLength": kwAnnotation, "pattern": kwAnnotation,
	"minItems": kwAnnotation, "maxItems": kwAnnotation,
	"properties": kwSchemaMap, "additionalProperties": kwSchema, "items": kwSchema,
	"prefixItems": kwSchemaList, "anyOf": kwSchemaList, "$ref": kwRef, "$defs": kwDefs,
}

// schemaDrafts are the $schema values taken: draft 2020-12, which arr
// compiles with anyway.
var schemaDrafts = []string{"https://json-schema.org/draft/2020-12/schema", "https://json-schema.org/draft/2020-12/schema#"}

// subsetWalk checks one schema document against the subset.
type subsetWalk struct {
	defs map[string]any
	// size memoizes each def's expanded size; -1 marks one being sized
	// (a cycle when met again).
	size map[string]int
}

// checkSubset checks doc (decoded by decodeStrict) against the closed
// subset: unknown keyword → schema_unsupported, a $ref not to a local
// def or a cycle of $refs → schema_invalid, an expansion over
// maxSchemaNodes → schema_too_complex; each names the schema field.
func checkSubset(doc any) error {
	root, ok := doc.(map[string]any)
	if !ok {
		return domain.Invalid("schema_invalid", schemaField, "%s must be a JSON object", schemaField)
	}
	w := subsetWalk{defs: map[string]any{}, size: map[string]int{}}
	if d, ok := root["$defs"]; ok {
		if w.defs, ok = d.(map[string]any); !ok {
			return domain.Invalid("schema_invalid", schemaField, "%s: $defs must be an object of schemas", schemaField)
		}
	}
	n, err := w.node(root, "", true)
	if err != nil {
		return err
	}
	for _, name := range sortedKeys(w.defs) {
		d, err := w.def(name, "/$defs/"+name)
		if err != nil {
			return err
		}
		n = max(n, d) // a def no $ref uses is compiled all the same
	}
	if n > maxSchemaNodes {
		return tooComplex(n)
	}
	return nil
}

func tooComplex(n int) error {
	return domain.Invalid("schema_too_complex", schemaField,
		"%s expands to more than %d subschemas with its $refs inlined (%s); validating a reply against it would cost too much: refer to each definition fewer times",
		schemaField, maxSchemaNodes, sizeText(n))
}

func sizeText(n int) string {
	if n > maxSchemaNodes*1000 {
		return "far more"
	}
	return fmt.Sprint(n)
}

// node checks the subschema s at JSON pointer at and returns its expanded
// size (saturating above maxSchemaNodes).
func (w *subsetWalk) node(s any, at string, root bool) (int, error) {
	switch v := s.(type) {
	case bool:
		return 1, nil
	case map[string]any:
		n := 1
		for _, k := range sortedKeys(v) {
			m, err := w.keyword(k, v[k], at, root)
			if err != nil {
				return 0, err
			}
			n = addSat(n, m)
		}
		return n, nil
	}
	return 0, domain.Invalid("schema_invalid", schemaField, "%s at %q: a schema must be an object or a boolean", schemaField, pointer(at))
}

// keyword checks one keyword k of value v of the subschema at at.
func (w *subsetWalk) keyword(k string, v any, at string, root bool) (int, error) {
	kind, ok := subsetKeywords[k]
	if !ok {
		return 0, domain.Invalid("schema_unsupported", schemaField,
			"%s at %q uses the keyword %q, which arr does not take: a response_format schema may use only %s",
			schemaField, pointer(at), text.Bound(k, 60), strings.Join(sortedKeys(subsetKeywords), ", "))
	}
	here := at + "/" + k
	switch kind {
	case kwAnnotation:
		if k == "$schema" && !slices.Contains(schemaDrafts, fmt.Sprint(v)) {
			return 0, domain.Invalid("schema_invalid", schemaField, "%s: $schema may only be %s (draft 2020-12)", schemaField, schemaDrafts[0])
		}
		return 0, nil
	case kwSchema:
		return w.node(v, here, false)
	case kwSchemaMap:
		m, ok := v.(map[string]any)
		if !ok {
			return 0, domain.Invalid("schema_invalid", schemaField, "%s at %q must be an object of schemas", schemaField, pointer(here))
		}
		n := 0
		for _, name := range sortedKeys(m) {
			c, err := w.node(m[name], here+"/"+name, false)
			if err != nil {
				return 0, err
			}
			n = addSat(n, c)
		}
		return n, nil
	case kwSchemaList:
		l, ok := v.([]any)
		if !ok {
			return 0, domain.Invalid("schema_invalid", schemaField, "%s at %q must be an array of schemas", schemaField, pointer(here))
		}
		n := 0
		for i, s := range l {
			c, err := w.node(s, fmt.Sprintf("%s/%d", here, i), false)
			if err != nil {
				return 0, err
			}
			n = addSat(n, c)
		}
		return n, nil
	case kwRef:
		return w.ref(v, here)
	}
	if !root {
		return 0, domain.Invalid("schema_unsupported", schemaField, "%s at %q: $defs is taken only at the schema's root", schemaField, pointer(here))
	}
	return 0, nil // the root's defs are sized through checkSubset
}

// ref is the expanded size of a $ref: its def's.
func (w *subsetWalk) ref(v any, at string) (int, error) {
	s, _ := v.(string)
	name, ok := strings.CutPrefix(s, "#/$defs/")
	if _, def := w.defs[name]; !ok || !def || strings.ContainsAny(name, "/~%") {
		return 0, domain.Invalid("schema_invalid", schemaField,
			"%s at %q: $ref %q must name a definition of the schema's own $defs, as \"#/$defs/name\" (no other document, no other pointer)",
			schemaField, pointer(at), text.Bound(s, 100))
	}
	return w.def(name, at)
}

// def is the expanded size of the def name, memoized; a def met again
// while it is being sized is a cycle.
func (w *subsetWalk) def(name, at string) (int, error) {
	switch n, seen := w.size[name]; {
	case seen && n < 0:
		return 0, domain.Invalid("schema_invalid", schemaField,
			"%s at %q: the $ref to %q makes a cycle of $refs; a response_format schema's $refs must not recur", schemaField, pointer(at), text.Bound(name, 60))
	case seen:
		return n, nil
	}
	w.size[name] = -1
	n, err := w.node(w.defs[name], "/$defs/"+name, false)
	if err != nil {
		return 0, err
	}
	w.size[name] = n
	return n, nil
}

// addSat adds sizes, saturating above the budget.
func addSat(a, b int) int {
	return min(a+b, maxSchemaNodes*1000+1)
}

func pointer(at string) string {
	if at == "" {
		return "/"
	}
	return text.Bound(at, 200)
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
