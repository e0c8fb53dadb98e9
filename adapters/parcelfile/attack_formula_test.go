package parcelfile_test

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"

	"github.com/arr-dev/arr/adapters/parcelfile"
)

// TestCSVNeutralizesHiddenFormulas: a formula behind leading white space
// (a space, a no-break space, a line break) or written with a full-width
// sign (＝ ＋ － ＠), which a spreadsheet reads as the ASCII one, is
// neutralized as a bare one is (issue 39 re-attack); text that only
// contains a sign later is written as it is.
func TestCSVNeutralizesHiddenFormulas(t *testing.T) {
	hostile := []string{" =1+1", "\u00a0=1+1", "\n=1+1", "  \n @SUM(A1)", "＝HYPERLINK(\"x\")", "＋1 MAIN ST", "－2 MAIN ST",
		"＠SUM(A1)", "\u3000=1+1", "\u2003+1"}
	safe := []string{"12 MAIN ST", "A=B", "5 MAIN ST APT 2-B", " 12 MAIN ST"}
	h, ps := sample()
	for i, v := range append(append([]string{}, hostile...), safe...) {
		p := ps[2]
		p.APN, p.Address = "X"+string(rune('A'+i)), v
		ps = append(ps, p)
	}
	h.Parcels = int64(len(ps))
	var b bytes.Buffer
	w, err := parcelfile.NewCSV(&b, h)
	if err != nil {
		t.Fatal(err)
	}
	writeAll(t, w, ps)
	rows, err := csv.NewReader(bytes.NewReader(b.Bytes())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	for i, v := range hostile {
		if got := rows[4+i][col["address"]]; !strings.HasPrefix(got, "'") {
			t.Errorf("address %q written as %q, want it neutralized with a leading quote", v, got)
		}
	}
	for i, v := range safe {
		if got := rows[4+len(hostile)+i][col["address"]]; got != v {
			t.Errorf("address %q written as %q, want it as it is", v, got)
		}
	}
}
