package records

import "time"

// ExportHeader is what an export of a county's parcels knows before its
// first parcel, read from the same snapshot as the parcels: the county,
// the layers whose records appear in it (each gets its own columns), how
// many parcels follow, and when the snapshot was taken.
type ExportHeader struct {
	County string
	// Layers are the keys of the layers that name at least one parcel of
	// the county, in LayerKeys order.
	Layers  []string
	Parcels int64
	At      time.Time
	// Weights and ScoreAsOf are what each parcel's motivation score is
	// computed with (Score).
	Weights   WeightTable
	ScoreAsOf time.Time
}

// Score is p's motivation score in an export with header h: Motivation
// over the layers naming p, as of h.ScoreAsOf with h.Weights, each layer
// dated as ScoreInputOf dates it (the signals API's score).
func (h ExportHeader) Score(p *ExportParcel) Score {
	in := make([]ScoreInput, 0, len(p.Signals))
	for _, s := range p.Signals {
		in = append(in, ScoreInputOf(Layer(s.Layer), s.SourceDate, s.RecordDate))
	}
	return Motivation(in, h.ScoreAsOf, h.Weights)
}

// ExportParcel is one parcel of an export with the records of the layers
// that name it. Never contact data.
type ExportParcel struct {
	County, APN, Address string
	// Placed: the parcel has coordinates (Lon, Lat in WGS 84); a parcel
	// without them has no geometry in the files.
	Placed    bool
	Lon, Lat  float64
	SourceURL string
	// Signals are the records of the layers naming the parcel, by layer key.
	Signals []ExportSignal
}

// ExportSignal is one layer's record of a parcel: when the layer's source
// was published, the record's own date (if any), when arr first and last
// saw it named and last crawled the source, and the source's URL.
type ExportSignal struct {
	Layer      string
	SourceDate string // YYYY-MM-DD
	RecordDate string // YYYY-MM-DD, or empty
	FirstSeen  time.Time
	LastSeen   time.Time
	LastCrawl  time.Time
	SourceURL  string
}

// Signal returns p's record of layer, if a record of it names p.
func (p ExportParcel) Signal(layer string) (ExportSignal, bool) {
	for _, s := range p.Signals {
		if s.Layer == layer {
			return s, true
		}
	}
	return ExportSignal{}, false
}
