// Command funclen lists the longest functions of arr's Go code (tests and
// generated files left out), longest first, as "lines path:line name", and
// those over each layer's limit (docs/architecture.md: 80 lines in cmd/,
// 100 in domain, commands, projections, readapi, eventstore and adapters).
//
//	go run ./scripts/funclen [-n 10] [-over]
//
// A function's length is its lines from `func` to its closing brace.
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

type fn struct {
	lines int
	at    string
	name  string
	limit int
}

// limits are the longest a function may be, by top-level folder.
var limits = map[string]int{"cmd": 80, "domain": 100, "commands": 100, "projections": 100, "readapi": 100, "eventstore": 100, "adapters": 100}

func main() {
	n := flag.Int("n", 10, "how many of the longest to list")
	over := flag.Bool("over", false, "list every function over its layer's limit instead, and exit 1 if there is one")
	flag.Parse()
	fns, err := collect(".")
	if err != nil {
		fmt.Fprintln(os.Stderr, "funclen:", err)
		os.Exit(2)
	}
	sort.Slice(fns, func(i, j int) bool { return fns[i].lines > fns[j].lines })
	if *over {
		bad := 0
		for _, f := range fns {
			if f.limit > 0 && f.lines > f.limit {
				bad++
				fmt.Printf("%4d  %s %s (limit %d)\n", f.lines, f.at, f.name, f.limit)
			}
		}
		if bad > 0 {
			os.Exit(1)
		}
		return
	}
	for _, f := range fns[:min(*n, len(fns))] {
		fmt.Printf("%4d  %s %s\n", f.lines, f.at, f.name)
	}
}

func collect(root string) ([]fn, error) {
	var out []fn
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != "." || d.Name() == "node_modules" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		if ast.IsGenerated(f) {
			return nil
		}
		limit := limits[strings.SplitN(filepath.ToSlash(path), "/", 2)[0]]
		for _, decl := range f.Decls {
			if d, ok := decl.(*ast.FuncDecl); ok && d.Body != nil {
				start, end := fset.Position(d.Pos()), fset.Position(d.End())
				name := d.Name.Name
				if d.Recv != nil && len(d.Recv.List) > 0 {
					name = recv(d.Recv.List[0].Type) + "." + name
				}
				out = append(out, fn{lines: end.Line - start.Line + 1, at: fmt.Sprintf("%s:%d", path, start.Line), name: name, limit: limit})
			}
		}
		return nil
	})
	return out, err
}

func recv(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return recv(t.X)
	case *ast.IndexExpr:
		return recv(t.X)
	case *ast.IndexListExpr:
		return recv(t.X)
	case *ast.Ident:
		return t.Name
	}
	return "?"
}
