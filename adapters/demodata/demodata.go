package demodata

import (
	"bufio"
	"compress/gzip"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"

	"github.com/arr-dev/arr/domain/records"
	"github.com/google/uuid"
)

//go:embed files/*
var files embed.FS

// Load is one demo layer load.
type Load struct {
	ID         string `json:"id"`
	Layer      string `json:"layer"`
	County     string `json:"county"`
	File       string `json:"file"`
	Mapping    string `json:"mapping"`
	SourceURL  string `json:"source_url"`
	SourceDate string `json:"source_date"`
}

// LoadID is the load's fixed id: loading the demo twice finds it in the
// log and skips it.
func (l Load) LoadID() uuid.UUID {
	return uuid.NewSHA1(uuid.NameSpaceURL, []byte("https://arr.dev/demodata/"+l.ID))
}

// Open opens one of the embedded files (still gzip-compressed).
func Open(name string) (fs.File, error) { return files.Open("files/" + name) }

// ReadFile returns an embedded file as stored.
func ReadFile(name string) ([]byte, error) { return files.ReadFile("files/" + name) }

// Loads returns the demo loads in the order they are loaded.
func Loads() ([]Load, error) {
	b, err := files.ReadFile("files/demo.json")
	if err != nil {
		return nil, err
	}
	var out []Load
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("demo.json: %w", err)
	}
	return out, nil
}

// State, County and Gazetteer are the reference data's types, which the
// records service serves (domain/records holds them).
type (
	State     = records.State
	County    = records.County
	Gazetteer = records.Gazetteer
)

// LoadGazetteer parses the embedded gazetteer; callers keep the result.
func LoadGazetteer() (*Gazetteer, error) { return parseGazetteer() }

func gzLines(name string) ([][]string, error) {
	f, err := Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	var out [][]string
	sc := bufio.NewScanner(io.Reader(gz))
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			out = append(out, strings.Split(l, "|"))
		}
	}
	return out, sc.Err()
}

func parseGazetteer() (*Gazetteer, error) {
	g := &Gazetteer{SourceURL: "https://www2.census.gov/geo/docs/maps-data/data/gazetteer/2017_Gazetteer/"}
	states, err := gzLines("census_states.txt.gz")
	if err != nil {
		return nil, fmt.Errorf("gazetteer states: %w", err)
	}
	for _, f := range states {
		if len(f) >= 3 {
			g.States = append(g.States, State{FIPS: f[0], Code: f[1], Name: f[2]})
		}
	}
	counties, err := gzLines("census_counties.txt.gz")
	if err != nil {
		return nil, fmt.Errorf("gazetteer counties: %w", err)
	}
	num := func(s string) float64 { v, _ := strconv.ParseFloat(strings.TrimSpace(s), 64); return v }
	for _, f := range counties {
		if len(f) >= 10 {
			g.Counties = append(g.Counties, County{FIPS: f[1], State: f[0], Name: f[3], LandSqMi: num(f[6]), WaterSqMi: num(f[7]), Lat: num(f[8]), Lon: num(f[9])})
		}
	}
	return g, nil
}
