package listfile_test

import (
	"os"
	"strings"
	"testing"

	"github.com/arr-dev/arr/adapters/listfile"
)

// TestDocsHeaderTable: docs/lists.md lists every header of the table.
func TestDocsHeaderTable(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../docs/lists.md")
	if err != nil {
		t.Fatal(err)
	}
	for col, as := range listfile.HeaderAliases {
		var line string
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "| "+col+" | ") {
				line = l
			}
		}
		for _, a := range as {
			if !strings.Contains(line, "`"+a+"`") {
				t.Errorf("docs/lists.md's %s row does not list %q", col, a)
			}
		}
	}
}
