package verifier_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportsStandardLibraryOnly keeps the verifier usable by an auditor
// who does not trust arr: it may import the Go standard library only.
func TestImportsStandardLibraryOnly(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if p == "github.com/arr-dev/arr/eventstore/transparency/verifier" {
			continue
		}
		t.Errorf("the verifier depends on %s; it may import the standard library only", p)
	}
}
