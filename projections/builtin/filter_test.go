package builtin_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/arr-dev/arr/projections"
	"github.com/arr-dev/arr/projections/builtin"
	"github.com/arr-dev/arr/projections/logstats"
)

// TestFiltersNameEveryAppliedType: for every projection that filters
// batches (EventFilter), each event type its Apply names (as a typed
// payload, *pkg.Type, or as pkg.Type{}.EventType()) is one its EventTypes
// names (only those are decoded), so a type added to
// Apply but not to EventTypes fails here instead of being skipped in
// production.
func TestFiltersNameEveryAppliedType(t *testing.T) {
	fset := token.NewFileSet()
	dirs, err := filepath.Glob("../*")
	if err != nil {
		t.Fatal(err)
	}
	applied := map[string]map[string]bool{} // package.receiver -> types named in Apply
	handled := map[string]map[string]bool{} // package.receiver -> types named in EventTypes
	for _, dir := range dirs {
		pkgs, err := parser.ParseDir(fset, dir, func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
		if err != nil {
			continue // not a package directory
		}
		for _, pkg := range pkgs {
			for _, f := range pkg.Files {
				for _, d := range f.Decls {
					fn, ok := d.(*ast.FuncDecl)
					if !ok || fn.Recv == nil || len(fn.Recv.List) != 1 || fn.Body == nil {
						continue
					}
					id, ok := fn.Recv.List[0].Type.(*ast.Ident)
					if !ok {
						continue
					}
					var into map[string]map[string]bool
					switch fn.Name.Name {
					case "Apply":
						into = applied
					case "EventTypes":
						into = handled
					default:
						continue
					}
					recv := pkg.Name + "." + id.Name
					if into[recv] == nil {
						into[recv] = map[string]bool{}
					}
					for _, name := range eventTypesNamed(fn.Body) {
						into[recv][name] = true
					}
				}
			}
		}
	}
	filters := map[string]projections.EventFilter{}
	for _, p := range builtin.All() {
		if f, ok := p.(projections.EventFilter); ok {
			filters[p.Name()] = f
		}
	}
	if len(filters) < 9 {
		t.Fatalf("only %d projections filter; want the 9 that name their types", len(filters))
	}
	for recv, hs := range handled {
		as := applied[recv]
		if len(as) == 0 {
			t.Errorf("%s.Apply names no event type, but %s has EventTypes", recv, recv)
		}
		for _, name := range slices.Sorted(maps.Keys(as)) {
			if !hs[name] {
				t.Errorf("%s.Apply acts on %s, which %s.EventTypes does not name: its events would be skipped", recv, name, recv)
			}
		}
	}
	if _, ok := any(logstats.Projection{}).(projections.EventFilter); ok {
		t.Error("logstats counts every event type; it must not filter")
	}
}

// eventTypesNamed returns the X.Y of every X.Y{}.EventType() in n.
func eventTypesNamed(n ast.Node) []string {
	var out []string
	pointee := func(e ast.Expr) {
		if star, ok := e.(*ast.StarExpr); ok {
			if ts, ok := star.X.(*ast.SelectorExpr); ok {
				if pkg, ok := ts.X.(*ast.Ident); ok {
					out = append(out, pkg.Name+"."+ts.Sel.Name)
				}
			}
		}
	}
	ast.Inspect(n, func(n ast.Node) bool {
		// A typed payload: e.Payload.(*pkg.Type), or case *pkg.Type: in a
		// type switch.
		switch t := n.(type) {
		case *ast.TypeAssertExpr:
			pointee(t.Type)
		case *ast.CaseClause:
			for _, e := range t.List {
				pointee(e)
			}
		}
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "EventType" {
			return true
		}
		x := sel.X
		if p, ok := x.(*ast.ParenExpr); ok {
			x = p.X
		}
		lit, ok := x.(*ast.CompositeLit)
		if !ok {
			return true
		}
		if ts, ok := lit.Type.(*ast.SelectorExpr); ok {
			if pkg, ok := ts.X.(*ast.Ident); ok {
				out = append(out, pkg.Name+"."+ts.Sel.Name)
			}
		}
		return true
	})
	return out
}
