package listeval_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/arr-dev/arr/adapters/demodata/listeval"
	"github.com/arr-dev/arr/adapters/listfile"
)

// TestShapesParse: every shape is read by the header table alone, with a
// row per record, and no row's property address is its mailing one.
func TestShapesParse(t *testing.T) {
	t.Parallel()
	recs, err := listeval.Records(25)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) < 1000 {
		t.Fatalf("%d records", len(recs))
	}
	for _, shape := range listeval.Shapes {
		l, err := listeval.Build(shape, recs)
		if err != nil {
			t.Fatal(err)
		}
		parsed, err := listfile.Parse(bytes.NewReader(l.CSV))
		if err != nil {
			t.Fatalf("%s: %v", shape, err)
		}
		if len(parsed.Rows) != len(recs) || len(l.Truths) != len(recs) {
			t.Fatalf("%s: %d rows of %d records", shape, len(parsed.Rows), len(recs))
		}
		mailing := false
		for _, c := range parsed.Columns {
			mailing = mailing || c == listfile.ColMailing
		}
		if !mailing {
			t.Errorf("%s: no mailing columns recognized in %v", shape, parsed.Columns)
		}
		for i, r := range parsed.Rows {
			if r.Address == "" {
				t.Fatalf("%s row %d has no property address", shape, i+1)
			}
			own := strings.Fields(strings.ToUpper(recs[i].Address))[0]
			if !strings.HasSuffix(strings.Fields(strings.ToUpper(r.Address))[0], strings.TrimLeft(own, "0")) {
				t.Fatalf("%s row %d: address %q is not record %q's", shape, i+1, r.Address, recs[i].Address)
			}
		}
	}
	again, _ := listeval.Build("propstream", recs)
	first, _ := listeval.Build("propstream", recs)
	if !bytes.Equal(again.CSV, first.CSV) {
		t.Fatal("Build is not deterministic")
	}
}
