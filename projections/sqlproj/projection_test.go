package sqlproj_test

import (
	"context"
	"testing"

	"github.com/arr-dev/arr/projections/sqlproj"
)

// TestSpendByModel: the projection, defined on a log that already
// holds completions, is built from it, then kept up to date; a rebuild
// yields the same rows.
func TestSpendByModel(t *testing.T) {
	h := newHarness(t, sqlproj.Config{})
	for i := range 120 {
		h.completion(t, []string{"small-1", "mid-1"}[i%2], int64(10+i%3))
	}
	p := h.define(t, spendSQL(t))
	head := h.completion(t, "small-1", 1000)
	h.waitFor(t, p.Name(), head)
	want := [][]string{{"mid-1", "660", "60"}, {"small-1", "1660", "61"}}
	check := func(when string) {
		t.Helper()
		res := h.query(t, "spend_by_model", "SELECT model, cost_micro, n FROM spend ORDER BY model;")
		if len(res.Columns) != 3 || res.Columns[0] != "model" || len(res.Rows) != 2 {
			t.Fatalf("%s: got %v %v", when, res.Columns, res.Rows)
		}
		for i, row := range res.Rows {
			for j, v := range row {
				if sqlproj.Text(v) != want[i][j] {
					t.Fatalf("%s: row %d = %s, want %v", when, i, row, want[i])
				}
			}
		}
	}
	check("live")
	if err := h.runner.Rebuild(context.Background(), p.Name(), nil); err != nil {
		t.Fatal(err)
	}
	check("after a rebuild")
}
