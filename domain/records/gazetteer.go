package records

// State is a state of the Census gazetteer.
type State struct {
	FIPS string `json:"fips"`
	Code string `json:"code"`
	Name string `json:"name"`
}

// County is a county of the Census gazetteer.
type County struct {
	FIPS      string  `json:"fips"`
	State     string  `json:"state"`
	Name      string  `json:"name"`
	LandSqMi  float64 `json:"land_sq_mi"`
	WaterSqMi float64 `json:"water_sq_mi"`
	Lat       float64 `json:"lat"`
	Lon       float64 `json:"lon"`
}

// Gazetteer is the reference list of states and counties the records
// service names (the Census 2017 gazetteer, shipped in adapters/demodata).
type Gazetteer struct {
	States   []State
	Counties []County
	// SourceURL is where it came from.
	SourceURL string
}
