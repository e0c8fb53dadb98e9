package routing

// DefaultQualityFloor is quality_floor when the request does not set it.
const DefaultQualityFloor = 0.75

// Rating bounds: feedback rates a completion from 1 (useless) to 5
// (excellent); a rating r counts as observed quality (r-1)/4.
const (
	MinRating = 1.0
	MaxRating = 5.0
)

// RatingQuality maps a rating to observed quality in [0, 1].
func RatingQuality(r float64) float64 { return (r - MinRating) / (MaxRating - MinRating) }

// priorWeight is how many ratings the catalog's prediction is worth: with
// n ratings of mean quality m, the prediction p becomes
// (p·priorWeight + m·n) / (priorWeight + n).
const priorWeight = 20.0

// TierBand keys feedback by tier and difficulty band.
type TierBand struct {
	Tier string
	Band Band
}

// Stat is the feedback on one tier in one band: how many ratings and the
// sum of their observed qualities.
type Stat struct {
	N          int64
	QualitySum float64
}

// Feedback is the feedback statistics the router reads (from the
// tier-quality read model).
type Feedback map[TierBand]Stat

// Predict is a tier's predicted quality at difficulty d before feedback:
// its catalog quality q lowered by (1−q)·d, so weaker tiers fall off
// faster as requests get harder.
func Predict(t Tier, d float64) float64 {
	return t.Quality - (1-t.Quality)*d
}

// Corrected is Predict blended with the feedback of the tier in d's band.
func (f Feedback) Corrected(t Tier, d float64) float64 {
	p := Predict(t, d)
	st, ok := f[TierBand{t.Name, BandOf(d)}]
	if !ok || st.N <= 0 {
		return p
	}
	return (p*priorWeight + st.QualitySum) / (priorWeight + float64(st.N))
}
