package eventstore_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// maxResults is the most values a function in eventstore/ may return: an
// outcome with more parts is a named struct (litestream's syncResult).
const maxResults = 3

// TestNoFunctionReturnsMoreThanThree walks eventstore/ (this folder and
// every package under it, test files left out) and fails for each
// function, method or function literal that returns more than maxResults
// values, naming it.
func TestNoFunctionReturnsMoreThanThree(t *testing.T) {
	fset := token.NewFileSet()
	files := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files++
		names := map[*ast.FuncType]string{}
		ast.Inspect(f, func(n ast.Node) bool {
			switch fn := n.(type) {
			case *ast.FuncDecl: // seen before its type
				names[fn.Type] = fn.Name.Name
			case *ast.FuncLit:
				names[fn.Type] = "a function literal"
			case *ast.FuncType: // also a func-typed field, parameter or result
				name, ok := names[fn]
				if !ok {
					name = "a function type"
				}
				if k := results(fn); k > maxResults {
					t.Errorf("%s: %s returns %d values; return a named struct instead (at most %d)", fset.Position(fn.Pos()), name, k, maxResults)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 50 {
		t.Fatalf("scanned %d Go files under eventstore/; want the whole tree (run from eventstore/)", files)
	}
}

func results(ft *ast.FuncType) int {
	if ft.Results == nil {
		return 0
	}
	k := 0
	for _, r := range ft.Results.List {
		k += max(len(r.Names), 1)
	}
	return k
}
