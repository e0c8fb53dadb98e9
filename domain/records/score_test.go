package records_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/records"
)

func day(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestMotivationTermsAddUp(t *testing.T) {
	asOf := day("2026-06-01")
	inputs := []records.ScoreInput{
		{Layer: records.LisPendens, Date: day("2026-05-20")},    // 12 days: factor 1
		{Layer: records.CodeViolation, Date: day("2025-10-01")}, // 243 days: 0.75
		{Layer: records.Vacant, Date: day("2019-10-01")},        // years: 0.25
		{Layer: records.TaxSale, Date: day("2024-12-01")},       // 547 days: 0.5
		{Layer: records.CodeViolation, Date: day("2024-01-01")}, // older duplicate: ignored
	}
	for _, tab := range records.WeightTables() {
		t.Run(tab.Version, func(t *testing.T) {
			s := records.Motivation(inputs, asOf, tab)
			if len(s.Terms) != 4 {
				t.Fatalf("want one term per layer, got %+v", s.Terms)
			}
			sum := 0.0
			for _, term := range s.Terms {
				want := float64(term.Weight) * term.RecencyFactor
				if math.Abs(term.Contribution-want) > 1e-9 {
					t.Errorf("%s: contribution %v, weight %d x factor %v = %v", term.Layer, term.Contribution, term.Weight, term.RecencyFactor, want)
				}
				sum += term.Contribution
			}
			if math.Abs(sum-s.Total) > 1e-9 || s.TotalHundredths() != int(math.Round(s.Total*100)) {
				t.Fatalf("terms add up to %v, total says %v", sum, s.Total)
			}
			if s.WeightsVersion != tab.Version || s.Max != 100 {
				t.Fatalf("version %q max %v", s.WeightsVersion, s.Max)
			}
		})
	}
	cv := records.Motivation(inputs, asOf, records.WeightTables()[1]).Terms[0]
	if cv.Layer != records.CodeViolation || cv.RecencyFactor != 0.75 || cv.RecordDate != "2025-10-01" {
		t.Fatalf("code violation term %+v", cv)
	}
}

func TestChangingWeightsVersionChangesScore(t *testing.T) {
	asOf := day("2026-06-01")
	inputs := []records.ScoreInput{{Layer: records.LisPendens, Date: day("2026-05-20")}, {Layer: records.CodeViolation, Date: day("2026-05-01")}}
	old, err := records.Weights("2025-09")
	if err != nil {
		t.Fatal(err)
	}
	cur, err := records.Weights("")
	if err != nil || cur.Version != records.DefaultWeightsVersion {
		t.Fatalf("default: %v %v", cur.Version, err)
	}
	a, b := records.Motivation(inputs, asOf, old), records.Motivation(inputs, asOf, cur)
	if a.Total == b.Total || a.WeightsVersion == b.WeightsVersion {
		t.Fatalf("versions %s and %s give %v and %v", a.WeightsVersion, b.WeightsVersion, a.Total, b.Total)
	}
	if a.Total != 33 || b.Total != 30 {
		t.Fatalf("2025-09: 17+16 = 33, got %v; 2026-02: 25+5 = 30, got %v", a.Total, b.Total)
	}
	if _, err := records.Weights("1999-01"); !errors.Is(err, domain.ErrInvalid) {
		t.Fatalf("unknown version: %v", err)
	}
}
