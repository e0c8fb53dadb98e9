package docs

import (
	"embed"
	"io/fs"
)

// pages are the reference documents, built into the binary.
//
//go:embed *.md
var pages embed.FS

// Pages is every reference document of arr (docs/*.md) as it was when the
// binary was built: what the answer service seeds its local index with.
// It is read from the binary, never from the working directory, so what
// is seeded does not depend on where arr runs or what lies there.
func Pages() fs.FS { return pages }
