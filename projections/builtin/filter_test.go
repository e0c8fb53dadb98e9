package builtin_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arr-dev/arr/domain/catalog"
	"github.com/arr-dev/arr/projections/builtin"
	"github.com/arr-dev/arr/projections/logstats"
)

// TestProjectionsReadWhatTheyHandle: a built-in projection reads the
// event types of its handlers (projections.On), so what it reads and what
// it applies cannot drift apart; each of those types is one the registry
// decodes, and only logstats reads every event.
func TestProjectionsReadWhatTheyHandle(t *testing.T) {
	reg := catalog.Registry()
	filtered := 0
	for _, p := range builtin.All() {
		s := p.Spec()
		types, err := s.Reads()
		if err != nil {
			t.Errorf("%s: %v", s.Name, err)
			continue
		}
		if s.Name == logstats.Name {
			if types != nil || s.AllEvents == nil {
				t.Errorf("logstats counts every event type; it must not filter (reads %v)", types)
			}
			continue
		}
		if len(types) == 0 {
			t.Errorf("%s reads no event type", s.Name)
		}
		filtered++
		for _, name := range types {
			if !reg.Known(name) {
				t.Errorf("%s handles %s, which the registry does not know", s.Name, name)
			}
		}
	}
	if filtered < 11 {
		t.Fatalf("only %d projections name their types by their handlers; want the 11 besides logstats", filtered)
	}
}

// TestNoHandKeptEventTypes: no projection keeps a list of the event types
// it reads beside its handlers (an EventTypes or Apply method of its own,
// kept in step by hand, as before projection specs): the list comes from
// the handlers.
func TestNoHandKeptEventTypes(t *testing.T) {
	fset := token.NewFileSet()
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if ok && fn.Recv != nil && (fn.Name.Name == "EventTypes" || fn.Name.Name == "Apply" && !isSpec(fn.Recv.List[0].Type)) {
				t.Errorf("%s: method %s: a projection's event types come from its Spec's handlers", fset.Position(fn.Pos()), fn.Name.Name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// isSpec says whether a receiver is projections' own Spec (whose Apply
// runs its handlers) or compiled spec.
func isSpec(recv ast.Expr) bool {
	if star, ok := recv.(*ast.StarExpr); ok {
		recv = star.X
	}
	id, ok := recv.(*ast.Ident)
	return ok && (id.Name == "Spec" || id.Name == "compiled")
}
