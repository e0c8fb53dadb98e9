package usps

import (
	"strings"
	"testing"
)

// TestRulesProbeEveryTableWord: every word of the three tables is in a
// probe line, so a word added to or moved in a table changes Rules (and a
// read model storing keys rebuilds), and Rules is the same on every call.
func TestRulesProbeEveryTableWord(t *testing.T) {
	lines := strings.Join(rulesLines(), "\n")
	for _, src := range []string{suffixTable, secondaryTable, directionalTable} {
		for _, w := range strings.Fields(src) {
			if !strings.Contains(lines, "100 Main St "+w+" 2") {
				t.Errorf("no probe line holds %q", w)
			}
		}
	}
	a, b := Rules(), Rules()
	if a != b || len(a) != 16 {
		t.Fatalf("Rules: %q then %q, want one 16-digit fingerprint", a, b)
	}
}

func BenchmarkRules(b *testing.B) {
	for b.Loop() {
		Rules()
	}
}
