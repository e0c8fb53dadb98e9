package projections_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// sources parses the non-test Go files under dir (recursively when deep).
func sources(t *testing.T, dir string, deep bool) (*token.FileSet, map[string]*ast.File) {
	t.Helper()
	fset := token.NewFileSet()
	files := map[string]*ast.File{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != dir && !deep {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		files[path] = f
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no Go files under %s", dir)
	}
	return fset, files
}

// TestNoFunctionReturnsMoreThanThree: no function (or function literal)
// in projections/** returns more than three values; an outcome of more
// parts is a named struct (runner.go's stepResult, readResult).
func TestNoFunctionReturnsMoreThanThree(t *testing.T) {
	fset, files := sources(t, ".", true)
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			var ft *ast.FuncType
			name := "a function literal"
			switch x := n.(type) {
			case *ast.FuncDecl:
				ft, name = x.Type, x.Name.Name
			case *ast.FuncLit:
				ft = x.Type
			default:
				return true
			}
			if ft.Results != nil && ft.Results.NumFields() > 3 {
				t.Errorf("%s: %s returns %d values; return a named struct", fset.Position(ft.Pos()), name, ft.Results.NumFields())
			}
			return true
		})
	}
}

// allowedAssertions are the only types the runner's package asserts: the
// store's optional filtered read, a handler's typed payload (On) and a
// context value.
var allowedAssertions = map[string]bool{"eventstore.TypeReader": true, "P": true, "time.Duration": true}

// TestRunnerAssertsNoProjection: the runner (projections/*.go) reads a
// projection's options from its Spec, never by a type assertion or type
// switch on the projection (the optional interfaces FailsClosed,
// EventFilter, JSONReader, IndexDeferrer, TxPooler, BatchCutter,
// SchemaBuilder and SessionRoler it used to assert are gone). Any other
// assertion fails here.
func TestRunnerAssertsNoProjection(t *testing.T) {
	fset, files := sources(t, ".", false)
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.TypeAssertExpr:
				if x.Type == nil { // the x.(type) of a type switch
					return true
				}
				if name := exprString(x.Type); !allowedAssertions[name] {
					t.Errorf("%s: type assertion %s.(%s): read a projection's options from its Spec", fset.Position(x.Pos()), exprString(x.X), name)
				}
			case *ast.TypeSwitchStmt:
				t.Errorf("%s: type switch: read a projection's options from its Spec", fset.Position(x.Pos()))
			}
			return true
		})
	}
}

func exprString(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.SelectorExpr:
		return exprString(x.X) + "." + x.Sel.Name
	case *ast.StarExpr:
		return "*" + exprString(x.X)
	case *ast.CallExpr:
		return exprString(x.Fun) + "(…)"
	}
	return "…"
}
