package records

import (
	"sort"
	"strings"
	"time"

	"github.com/arr-dev/arr/domain"
)

// RecencyBand gives records up to MaxAgeDays old (0: any age) a factor,
// in thousandths.
type RecencyBand struct {
	MaxAgeDays     int `json:"max_age_days"`
	FactorPermille int `json:"factor_permille"`
}

// WeightTable is one published version of the motivation-score weights:
// points per layer and the recency bands. A version is never edited after
// publication; a change is a new version.
type WeightTable struct {
	Version   string        `json:"version"`
	Published string        `json:"published"`
	Note      string        `json:"note"`
	Weights   map[Layer]int `json:"weights"`
	Recency   []RecencyBand `json:"recency"`
}

// DefaultWeightsVersion is the version used when a caller names none.
const DefaultWeightsVersion = "2026-02"

// WeightTables is the versioned weights table, oldest first. The score of a
// parcel is sum over the layers naming it of weight x recency factor; with
// every layer fresh the maximum is 100 in each version.
func WeightTables() []WeightTable {
	bands := []RecencyBand{{90, 1000}, {365, 750}, {730, 500}, {0, 250}}
	return []WeightTable{
		{Version: "2025-09", Published: "2025-09-01", Note: "first table: every distress layer weighs about the same",
			Weights: map[Layer]int{Vacant: 17, TaxSale: 17, TaxDelinquent: 16, CodeViolation: 16, ForeclosureAuction: 17, LisPendens: 17},
			Recency: bands},
		{Version: "2026-02", Published: "2026-02-01", Note: "court filings and auctions weigh more than code violations; a lis pendens or auction signals a deadline",
			Weights: map[Layer]int{Vacant: 15, TaxSale: 20, TaxDelinquent: 10, CodeViolation: 5, ForeclosureAuction: 25, LisPendens: 25},
			Recency: bands},
	}
}

// Weights returns one version of the table; an empty version is the
// default; an unknown one is ErrInvalid listing the versions.
func Weights(version string) (WeightTable, error) {
	if version == "" {
		version = DefaultWeightsVersion
	}
	var have []string
	for _, t := range WeightTables() {
		if t.Version == version {
			return t, nil
		}
		have = append(have, t.Version)
	}
	return WeightTable{}, domain.Invalid("unknown_weights_version", "weights", "unknown weights version %q; published versions are %s", version, strings.Join(have, ", "))
}

// ScoreInput is one layer naming a parcel, with the date its record
// describes (the record's own date when it has one, else the source date of
// the load).
type ScoreInput struct {
	Layer Layer
	Date  time.Time
}

// ScoreInputOf is the score's input for a layer naming a parcel, from
// its record's dates (YYYY-MM-DD): the record's own date when it has one
// (recordDate not empty), else its load's source date. A date that does
// not parse counts as the zero time (the oldest band).
func ScoreInputOf(layer Layer, sourceDate, recordDate string) ScoreInput {
	d := sourceDate
	if recordDate != "" {
		d = recordDate
	}
	day, _ := time.Parse(time.DateOnly, d)
	return ScoreInput{Layer: layer, Date: day}
}

// Term is one line of the score's arithmetic: Contribution = Weight x
// RecencyFactor.
type Term struct {
	Layer         Layer   `json:"layer"`
	Weight        int     `json:"weight"`
	RecordDate    string  `json:"record_date"`
	AgeDays       int     `json:"age_days"`
	RecencyFactor float64 `json:"recency_factor"`
	Contribution  float64 `json:"contribution"`
	// hundredths is the contribution in hundredths of a point: totals are
	// sums of integers, so the terms add up exactly.
	hundredths int
}

// Score is the motivation score with its arithmetic.
type Score struct {
	WeightsVersion string  `json:"weights_version"`
	AsOf           string  `json:"as_of"`
	Terms          []Term  `json:"terms"`
	Total          float64 `json:"total"`
	Max            float64 `json:"max"`
	Formula        string  `json:"formula"`
}

// Motivation computes the score of a parcel named by inputs, as of asOf,
// with the given weights table. One term per layer (a layer naming the
// parcel twice counts once, with its newest date); terms are in layer-key
// order. Pure and deterministic.
func Motivation(inputs []ScoreInput, asOf time.Time, t WeightTable) Score {
	newest := map[Layer]time.Time{}
	for _, in := range inputs {
		if d, ok := newest[in.Layer]; !ok || in.Date.After(d) {
			newest[in.Layer] = in.Date
		}
	}
	layers := make([]string, 0, len(newest))
	for l := range newest {
		layers = append(layers, string(l))
	}
	sort.Strings(layers)
	s := Score{WeightsVersion: t.Version, AsOf: asOf.UTC().Format(time.DateOnly), Terms: []Term{},
		Formula: "total = sum of weight x recency_factor over the layers naming the parcel"}
	total, maxH := 0, 0
	for _, w := range t.Weights {
		maxH += w * 100
	}
	for _, ls := range layers {
		l := Layer(ls)
		d := newest[l]
		age := int(asOf.UTC().Sub(d.UTC()).Hours() / 24)
		if age < 0 {
			age = 0
		}
		f := factor(t.Recency, age)
		h := t.Weights[l] * f / 10
		total += h
		s.Terms = append(s.Terms, Term{Layer: l, Weight: t.Weights[l], RecordDate: d.UTC().Format(time.DateOnly), AgeDays: age,
			RecencyFactor: float64(f) / 1000, Contribution: float64(h) / 100, hundredths: h})
	}
	s.Total, s.Max = float64(total)/100, float64(maxH)/100
	return s
}

// TotalHundredths is the total in hundredths of a point (exact).
func (s Score) TotalHundredths() int {
	n := 0
	for _, t := range s.Terms {
		n += t.hundredths
	}
	return n
}

func factor(bands []RecencyBand, age int) int {
	for _, b := range bands {
		if b.MaxAgeDays == 0 || age <= b.MaxAgeDays {
			return b.FactorPermille
		}
	}
	return 0
}
