package gateway_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// maxResults is the most values a function may return; more is a named
// result struct.
const maxResults = 3

// TestNoFunctionReturnsMoreThanThree: no function (or function literal)
// in the gateway's packages, commands/complete or domain/chat returns
// more than three values (tests excluded).
func TestNoFunctionReturnsMoreThanThree(t *testing.T) {
	fset := token.NewFileSet()
	files := 0
	for _, root := range []string{".", filepath.Join("..", "..", "commands", "complete"), filepath.Join("..", "..", "domain", "chat")} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			files++
			ast.Inspect(f, func(n ast.Node) bool {
				var ft *ast.FuncType
				switch x := n.(type) {
				case *ast.FuncDecl:
					ft = x.Type
				case *ast.FuncLit:
					ft = x.Type
				}
				if ft != nil && ft.Results != nil && ft.Results.NumFields() > maxResults {
					t.Errorf("%s: returns %d values; return a named result struct", fset.Position(ft.Pos()), ft.Results.NumFields())
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if files < 20 {
		t.Fatalf("scanned %d files: the walk missed the packages", files)
	}
}
