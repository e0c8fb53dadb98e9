package accountweb

import (
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/arr-dev/arr/projections/callusage"
)

func TestLayoutChart(t *testing.T) {
	cases := []struct {
		name       string
		calls      []int64
		wantMax    int64
		wantTotal  int64
		wantHeight []string // per bar
	}{
		{"all zero", []int64{0, 0, 0}, 0, 0, []string{"0.00", "0.00", "0.00"}},
		{"scaled to the busiest day", []int64{0, 78, 156}, 156, 234, []string{"0.00", "78.00", "156.00"}},
		{"a tiny day still shows", []int64{1_000_000, 1}, 1_000_000, 1_000_001, []string{"156.00", "1.00"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var days []callusage.DailyCalls
			for i, n := range tc.calls {
				days = append(days, callusage.DailyCalls{Day: "2026-01-0" + string(rune('1'+i)), Calls: n})
			}
			c := layoutChart(days)
			if c.Max != tc.wantMax || c.Total != tc.wantTotal || c.From != "2026-01-01" || len(c.Bars) != len(tc.calls) {
				t.Fatalf("chart %+v", c)
			}
			for i, b := range c.Bars {
				if b.H != tc.wantHeight[i] {
					t.Fatalf("bar %d height %s, want %s", i, b.H, tc.wantHeight[i])
				}
			}
		})
	}
}

// TestCSPAllowsExactlyTheStyleSheet: the policy's hash is the inline CSS's,
// and the policy allows no script and nothing from elsewhere.
func TestCSPAllowsExactlyTheStyleSheet(t *testing.T) {
	sum := sha256.Sum256([]byte(css))
	if !strings.Contains(csp, "'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'") {
		t.Fatalf("CSP %q lacks the style sheet's hash", csp)
	}
	for _, bad := range []string{"script-src", "unsafe-inline", "http:", "https:", "*"} {
		if strings.Contains(csp, bad) {
			t.Fatalf("CSP %q contains %q", csp, bad)
		}
	}
	tmpl, err := parseTemplates()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := tmpl["message"].ExecuteTemplate(&b, "layout", messagePage{base: base{CSS: "x"}, Message: "<script>alert(1)</script>"}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "<script>") || !strings.Contains(b.String(), "&lt;script&gt;") {
		t.Fatalf("the message is not escaped:\n%s", b.String())
	}
}
