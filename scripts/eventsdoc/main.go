// Command eventsdoc writes the event catalog's generated files: the doc
// comments of domain/'s types (projections/eventcatalog/fielddocs.json, which
// the arr binary embeds) and docs/events.md. Run it as `go generate
// ./docs`; docs/events_test.go fails when either file is stale.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/arr-dev/arr/domain/catalog"
	"github.com/arr-dev/arr/projections/eventcatalog"
)

func main() {
	root := flag.String("root", ".", "the repository's root")
	flag.Parse()
	if err := run(*root); err != nil {
		fmt.Fprintln(os.Stderr, "eventsdoc:", err)
		os.Exit(1)
	}
}

func run(root string) error {
	docs, err := eventcatalog.Extract(filepath.Join(root, "domain"), "github.com/arr-dev/arr/domain")
	if err != nil {
		return err
	}
	reg := catalog.Registry()
	docs = docs.For(reg)
	types, err := eventcatalog.Build(reg, docs)
	if err != nil {
		return err
	}
	md, err := eventcatalog.Markdown(types)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(root, "projections", "eventcatalog", "fielddocs.json"), docs.JSON(), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(root, "docs", "events.md"), md, 0o644)
}
