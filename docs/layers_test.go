package docs_test

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/arr-dev/arr"

// layerRules reads architecture.md's table: for each top-level folder,
// the folders it may import ("*" for everything), and whether it may
// import modules outside the standard library beyond uuid and
// x/text's Unicode normalization (domain may not).
func layerRules(t *testing.T) (allowed map[string][]string, stdlibOnly map[string]bool) {
	t.Helper()
	f, err := os.Open("architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	allowed, stdlibOnly = map[string][]string{}, map[string]bool{}
	folder := regexp.MustCompile("^\\| `([a-z]+)(/[a-z]+)?/` \\|")
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := folder.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		cells := strings.Split(sc.Text(), "|")
		may := strings.TrimSpace(cells[len(cells)-2])
		var to []string
		switch {
		case may == "everything":
			to = []string{"*"}
		case may == "—":
		case strings.HasPrefix(may, "the standard library"):
			stdlibOnly[m[1]] = true
		default:
			for _, part := range strings.Split(may, ",") {
				part = strings.TrimSpace(part)
				if part == "read-model queries" {
					part = "projections"
				}
				to = append(to, part)
			}
		}
		allowed[m[1]] = to
	}
	if len(allowed) < 9 {
		t.Fatalf("architecture.md's table has %d rows; want every top-level folder", len(allowed))
	}
	allowed["scripts"] = []string{"*"}
	return allowed, stdlibOnly
}

// domainModules are the packages outside the standard library that a
// folder limited to it may import: uuid, Unicode normalization (NFKC,
// NFC), which the standard library lacks and address and header matching
// need, and Snowball's English stemmer, which the local index's one
// tokenizer (domain/answer/terms: projection and scorer) needs.
var domainModules = map[string]bool{"github.com/google/uuid": true, "golang.org/x/text/unicode/norm": true,
	"github.com/blevesearch/snowballstem": true, "github.com/blevesearch/snowballstem/english": true}

// knownWrongArrows are imports the table does not allow that are still to
// be moved behind a command or a query. It is empty, and only shrinks: an
// arrow not on it fails, and so does one on it that is gone.
var knownWrongArrows = []string{}

// TestLayers: every package's imports follow architecture.md's table.
func TestLayers(t *testing.T) {
	allowed, stdlibOnly := layerRules(t)
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	var wrong []string
	for dec.More() {
		var p struct{ ImportPath string }
		var imports struct{ Imports []string }
		raw := json.RawMessage{}
		if err := dec.Decode(&raw); err != nil {
			t.Fatal(err)
		}
		_ = json.Unmarshal(raw, &p)
		_ = json.Unmarshal(raw, &imports)
		rel := strings.TrimPrefix(p.ImportPath, module+"/")
		top := strings.Split(rel, "/")[0]
		rules, ok := allowed[top]
		if !ok {
			t.Errorf("%s: top-level folder %s is not in architecture.md's table", p.ImportPath, top)
			continue
		}
		for _, imp := range imports.Imports {
			if !strings.HasPrefix(imp, module+"/") {
				if stdlibOnly[top] && strings.Contains(strings.Split(imp, "/")[0], ".") && !domainModules[imp] {
					wrong = append(wrong, rel+" -> "+imp)
				}
				continue
			}
			irel := strings.TrimPrefix(imp, module+"/")
			itop := strings.Split(irel, "/")[0]
			if itop == top || slices.Contains(rules, "*") || slices.Contains(rules, itop) {
				continue
			}
			wrong = append(wrong, rel+" -> "+irel)
		}
	}
	sort.Strings(wrong)
	for _, w := range wrong {
		if !slices.Contains(knownWrongArrows, w) {
			t.Errorf("%s: architecture.md does not allow this arrow", w)
		}
	}
	for _, k := range knownWrongArrows {
		if !slices.Contains(wrong, k) {
			t.Errorf("%s is gone: take it off knownWrongArrows", k)
		}
	}
}
