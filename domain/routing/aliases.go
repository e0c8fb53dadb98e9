package routing

import (
	"fmt"
	"path"
	"sort"
	"strings"
)

// alias is one entry of a catalog's aliases: a model name (or a
// path.Match pattern such as claude-*sonnet*) and what it stands for:
// auto, a tier name or a model id of the catalog.
type alias struct {
	name   string
	target string
}

func (a alias) pattern() bool { return strings.ContainsAny(a.name, `*?[\`) }

// WithAliases returns a copy of the catalog whose aliases are its own
// overlaid by extra (an entry of extra replaces the catalog's for the same
// name). Each name is a model name or a path.Match pattern (* matches any
// run of characters); it may not be auto, a tier name or a model id of the
// catalog. Each target is auto, a tier of the catalog or a model id.
func (c *Catalog) WithAliases(extra map[string]string) (*Catalog, error) {
	merged := map[string]string{}
	for _, a := range c.aliases {
		merged[a.name] = a.target
	}
	for k, v := range extra {
		merged[k] = v
	}
	out := *c
	out.aliases = nil
	names := make([]string, 0, len(merged))
	for k := range merged {
		names = append(names, k)
	}
	// Exact names first, then patterns from the longest (the most
	// specific) down; ties in name order. Resolve takes the first match.
	sort.Slice(names, func(i, j int) bool {
		a, b := alias{name: names[i]}, alias{name: names[j]}
		if a.pattern() != b.pattern() {
			return !a.pattern()
		}
		if len(a.name) != len(b.name) {
			return len(a.name) > len(b.name)
		}
		return a.name < b.name
	})
	for _, n := range names {
		a := alias{name: n, target: merged[n]}
		if err := c.checkAlias(a); err != nil {
			return nil, err
		}
		out.aliases = append(out.aliases, a)
	}
	return &out, nil
}

func (c *Catalog) checkAlias(a alias) error {
	switch {
	case a.name == "" || strings.TrimSpace(a.name) != a.name:
		return fmt.Errorf("alias %q: a name must be set, without surrounding spaces", a.name)
	case a.name == "auto" || isTier(a.name):
		return fmt.Errorf("alias %q: auto and the tier names cannot be aliased", a.name)
	}
	if c.known(a.name) {
		return fmt.Errorf("alias %q: it is a model id of the catalog", a.name)
	}
	if isEmbeddingTier(a.name) {
		return fmt.Errorf("alias %q: an embedding tier's name cannot be aliased", a.name)
	}
	if _, err := path.Match(a.name, ""); err != nil {
		return fmt.Errorf("alias %q: not a valid pattern: %v", a.name, err)
	}
	_, isModel := c.byModel[a.target]
	_, isTierOf := c.byTier[a.target]
	if a.target != "auto" && !isModel && !isTierOf {
		return fmt.Errorf("alias %q: its target %q is not auto, a tier of the catalog (%s) or a model id of it", a.name, a.target, strings.Join(c.tierList(), ", "))
	}
	return nil
}

// Resolve returns what a requested model name stands for: the name itself
// when it is auto, a tier name or a model id (or matches no alias), else
// the target of the first alias it matches (exact names before patterns,
// longer patterns before shorter ones).
func (c *Catalog) Resolve(name string) string {
	if name == "" || name == "auto" || isTier(name) {
		return name
	}
	if _, ok := c.byModel[name]; ok {
		return name
	}
	for _, a := range c.aliases {
		if a.name == name {
			return a.target
		}
		if ok, _ := path.Match(a.name, name); ok && a.pattern() {
			return a.target
		}
	}
	return name
}

// Aliases returns the catalog's aliases, name to target, in the order
// Resolve tries them.
func (c *Catalog) Aliases() [][2]string {
	out := make([][2]string, 0, len(c.aliases))
	for _, a := range c.aliases {
		out = append(out, [2]string{a.name, a.target})
	}
	return out
}

// ParseAliases reads ARR_MODEL_ALIASES: comma-separated name=target pairs
// (claude-*sonnet*=mid,claude-opus-4-1=high).
func ParseAliases(s string) (map[string]string, error) {
	out := map[string]string{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, target, ok := strings.Cut(part, "=")
		name, target = strings.TrimSpace(name), strings.TrimSpace(target)
		if !ok || name == "" || target == "" {
			return nil, fmt.Errorf("%q: each alias is name=target (a model name or pattern, and auto, a tier or a model id)", part)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("alias %q given twice", name)
		}
		out[name] = target
	}
	return out, nil
}
