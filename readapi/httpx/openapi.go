package httpx

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"sort"
)

// BuildOpenAPI assembles a service's OpenAPI document from the *.json files
// of dir in name order: the first is the base document, each later one adds
// its "paths" and "components" (and may append to info.description through
// an "x-description" string). A path or component defined twice is an
// error, so features can keep their part of the contract in their own file.
func BuildOpenAPI(fsys fs.FS) ([]byte, error) {
	names, err := fs.Glob(fsys, "*.json")
	if err != nil || len(names) == 0 {
		return nil, fmt.Errorf("openapi: no documents (%v)", err)
	}
	sort.Strings(names)
	var doc map[string]any
	for i, n := range names {
		b, err := fs.ReadFile(fsys, n)
		if err != nil {
			return nil, err
		}
		var part map[string]any
		if err := json.Unmarshal(b, &part); err != nil {
			return nil, fmt.Errorf("openapi: %s: %w", n, err)
		}
		if i == 0 {
			doc = part
			continue
		}
		if err := mergeSection(doc, part, "paths", n); err != nil {
			return nil, err
		}
		pc, _ := part["components"].(map[string]any)
		dc, _ := doc["components"].(map[string]any)
		if dc == nil {
			dc = map[string]any{}
			doc["components"] = dc
		}
		for section := range pc {
			if err := mergeSection(dc, pc, section, n); err != nil {
				return nil, err
			}
		}
		if extra, ok := part["x-description"].(string); ok {
			info, _ := doc["info"].(map[string]any)
			if info != nil {
				d, _ := info["description"].(string)
				info["description"] = d + "\n\n" + extra
			}
		}
	}
	return json.MarshalIndent(doc, "", "  ")
}

func mergeSection(dst, src map[string]any, key, file string) error {
	s, _ := src[key].(map[string]any)
	if len(s) == 0 {
		return nil
	}
	d, _ := dst[key].(map[string]any)
	if d == nil {
		d = map[string]any{}
		dst[key] = d
	}
	for k, v := range s {
		if _, dup := d[k]; dup {
			return fmt.Errorf("openapi: %s redefines %s %q", file, key, k)
		}
		d[k] = v
	}
	return nil
}
