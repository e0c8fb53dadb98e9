package domain_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDomainImportsNoInfrastructure keeps domain/ free of infrastructure:
// its packages may import the standard library, google/uuid and x/text's
// Unicode normalization (golang.org/x/text/unicode/norm, with the x/text
// package it builds on) and the Snowball English stemmer (the one
// tokenizer of the local index, domain/answer/terms) only: pure code, no
// I/O.
func TestDomainImportsNoInfrastructure(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, "github.com/arr-dev/arr/domain") || p == "github.com/google/uuid" || p == "golang.org/x/text/unicode/norm" || p == "golang.org/x/text/transform" ||
			strings.HasPrefix(p, "github.com/blevesearch/snowballstem") {
			continue
		}
		t.Errorf("domain depends on %s; domain may import the standard library, github.com/google/uuid, golang.org/x/text/unicode/norm and github.com/blevesearch/snowballstem only", p)
	}
}
