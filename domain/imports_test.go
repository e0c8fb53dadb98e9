package domain_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDomainImportsNoInfrastructure keeps domain/ free of infrastructure:
// its packages may import the standard library and google/uuid only.
func TestDomainImportsNoInfrastructure(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, "github.com/arr-dev/arr/domain") || p == "github.com/google/uuid" {
			continue
		}
		t.Errorf("domain depends on %s; domain may import the standard library and github.com/google/uuid only", p)
	}
}
