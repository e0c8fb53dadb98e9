package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"
)

// bboxProperties are the properties arr's bbox route returns for each
// parcel; pg_featureserv is asked for the same ones (properties=).
var bboxProperties = []string{"county", "apn", "address", "source_url", "layers", "signals"}

// target is one server under load: how to ask it for a box and how to
// read the number of features from its answer.
type target struct {
	name  string
	url   func(bbox string) string
	count func(body []byte) (int, bool)
	// binary: the body is not JSON (a vector tile); count says whether
	// it holds anything.
	binary bool
	// decode reads every feature's identity (county:apn) from a full body.
	decode func(body []byte) ([]feature, error)
}

// feature is what the equivalence check compares: the parcel's key and
// its properties as each server renders them, normalised.
type feature struct {
	ID         string
	Address    string
	SourceURL  string
	Layers     string
	Signals    string
	Lon, Lat   float64
	RawSignals json.RawMessage
}

func arrTarget(base string) target {
	return target{
		name:  "arr",
		url:   func(bbox string) string { return base + "/api/v1/parcels?limit=100&bbox=" + bbox },
		count: tailCount,
		decode: func(body []byte) ([]feature, error) {
			return decodeFeatures(body, func(f geoFeature) string { return string(f.ID) })
		},
	}
}

// searchRadiusM is the nearby search's radius in the bench; tileZoom the
// zoom of the tiles it asks for (about 2,000 synthetic parcels a tile).
const (
	searchRadiusM = 500
	tileZoom      = 14
)

// arrSearchTargets are arr's searches beyond the bbox, asked at the
// centres of the random boxes measure draws: parcels within searchRadiusM
// of the centre (nearest first), by address ("N SYNTHETIC", the house
// number drawn from the box's west edge; every synthetic parcel's address
// is "N SYNTHETIC ST", N from 1 to 9999), limit 100 each; and the vector
// tile at tileZoom holding the centre.
func arrSearchTargets(base string) []target {
	centre := func(bbox string) (x, y, w float64) {
		var e, n float64
		fmt.Sscanf(bbox, "%f,%f,%f,%f", &w, &y, &e, &n)
		return (w + e) / 2, (y + n) / 2, w
	}
	return []target{
		{name: "arr near", count: tailCount, url: func(bbox string) string {
			x, y, _ := centre(bbox)
			return fmt.Sprintf("%s/api/v1/parcels?limit=100&near=%.5f,%.5f&radius_m=%d", base, x, y, searchRadiusM)
		}},
		{name: "arr address", count: tailCount, url: func(bbox string) string {
			_, _, w := centre(bbox)
			return fmt.Sprintf("%s/api/v1/parcels?limit=100&address=%d+SYNTHETIC", base, 1+int((w-west)/side*9998))
		}},
		{name: "arr tile z14", binary: true, count: func(body []byte) (int, bool) { return 1, len(body) > 0 }, url: func(bbox string) string {
			x, y, _ := centre(bbox)
			n := math.Exp2(tileZoom)
			r := y * math.Pi / 180
			return fmt.Sprintf("%s/api/v1/tiles/%d/%d/%d.mvt", base, tileZoom, int((x+180)/360*n), int((1-math.Log(math.Tan(r)+1/math.Cos(r))/math.Pi)/2*n))
		}},
	}
}

// peerTarget asks pg_featureserv's OGC API Features items route: the same
// bbox, limit 100, the same properties, sorted by apn (arr pages in
// (county, apn) order; the synthetic county is one county, and
// pg_featureserv 1.3.1 sorts by one property only).
func peerTarget(base string) target {
	props := strings.Join(bboxProperties, ",")
	return target{
		name: "pg_featureserv",
		url: func(bbox string) string {
			return base + "/collections/rm_parcels.parcels/items.json?limit=100&sortby=apn&properties=" + props + "&bbox=" + bbox
		},
		count: numberReturned,
		// pg_featureserv gives no feature id: it takes the id from a
		// one-column primary key, and rm_parcels.parcels's is (county,
		// apn). The identity is read from the properties instead.
		decode: func(body []byte) ([]feature, error) {
			return decodeFeatures(body, func(f geoFeature) string { return f.Properties.County + ":" + f.Properties.APN })
		},
	}
}

type geoFeature struct {
	ID       json.RawMessage `json:"id"`
	Geometry struct {
		Coordinates []float64 `json:"coordinates"`
	} `json:"geometry"`
	Properties struct {
		County    string          `json:"county"`
		APN       string          `json:"apn"`
		Address   string          `json:"address"`
		SourceURL string          `json:"source_url"`
		Layers    json.RawMessage `json:"layers"`
		Signals   json.RawMessage `json:"signals"`
	} `json:"properties"`
}

func decodeFeatures(body []byte, id func(geoFeature) string) ([]feature, error) {
	var fc struct {
		Features []geoFeature `json:"features"`
	}
	if err := json.Unmarshal(body, &fc); err != nil {
		return nil, err
	}
	out := make([]feature, 0, len(fc.Features))
	for _, f := range fc.Features {
		if len(f.Geometry.Coordinates) != 2 {
			return nil, errors.New("a feature without point coordinates")
		}
		raw := f.Properties.Signals
		// pg_featureserv renders a jsonb column as a JSON string (its
		// text); arr as the JSON value. Compare the values.
		var s string
		if json.Unmarshal(raw, &s) == nil {
			raw = json.RawMessage(s)
		}
		out = append(out, feature{ID: strings.Trim(id(f), `"`), Address: f.Properties.Address, SourceURL: f.Properties.SourceURL,
			Layers: compact(f.Properties.Layers), Signals: compact(raw), Lon: f.Geometry.Coordinates[0], Lat: f.Geometry.Coordinates[1], RawSignals: f.Properties.Signals})
	}
	return out, nil
}

func compact(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// numberReturned reads pg_featureserv's "numberReturned" member.
func numberReturned(body []byte) (int, bool) {
	const key = `"numberReturned":`
	i := bytes.Index(body, []byte(key))
	if i < 0 {
		return 0, false
	}
	rest := body[i+len(key):]
	j := bytes.IndexAny(rest, ",}")
	if j < 0 {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(rest[:j])))
	return n, err == nil
}

// startPeer starts pg_featureserv with the config file records.sh wrote
// and waits (at most 30 s) until it publishes rm_parcels.parcels. The
// returned stop ends it by its PID.
func startPeer(bin, config, base, logPath string) (stop func(), err error) {
	return startServer("pg_featureserv", bin, config, base+"/collections/rm_parcels.parcels.json", logPath)
}

// startServer starts a peer server (pg_featureserv, pg_tileserv) with
// its config file, its output going to logPath, and waits (at most 30 s)
// until ready answers 200: the peer publishes the bench's table. The
// returned stop ends it by its PID.
func startServer(name, bin, config, ready, logPath string) (stop func(), err error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "--config", config)
	cmd.Stdout, cmd.Stderr = logf, logf
	// The DATABASE_URL variable would take precedence over the config
	// file's DbConnection: the config file is the one source.
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "DATABASE_URL=") })
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	stop = func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		logf.Close()
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(ready)
		if err == nil {
			io.Copy(io.Discard, resp.Body) //nolint:errcheck
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return stop, nil
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	stop()
	log, _ := os.ReadFile(logPath)
	return nil, fmt.Errorf("%s did not publish rm_parcels.parcels within 30s; its log:\n%s", name, log)
}

// sameFeatures asks both servers for the same n random boxes and compares
// the features: count, ids in order, properties and coordinates. It
// returns the features compared.
func sameFeatures(ctx context.Context, a, b target, n int, boxDeg float64) (int, error) {
	r := rand.New(rand.NewPCG(99, 7))
	total := 0
	for i := 0; i < n; i++ {
		x, y := west+r.Float64()*(side-boxDeg), south+r.Float64()*(side-boxDeg)
		box := fmt.Sprintf("%.5f,%.5f,%.5f,%.5f", x, y, x+boxDeg, y+boxDeg)
		fa, err := fetchFeatures(ctx, a, box)
		if err != nil {
			return total, err
		}
		fb, err := fetchFeatures(ctx, b, box)
		if err != nil {
			return total, err
		}
		if len(fa) != len(fb) {
			return total, fmt.Errorf("box %s: %s answers %d features, %s %d", box, a.name, len(fa), b.name, len(fb))
		}
		for j := range fa {
			p, q := fa[j], fb[j]
			p.RawSignals, q.RawSignals = nil, nil
			if fmt.Sprint(p) != fmt.Sprint(q) {
				return total, fmt.Errorf("box %s, feature %d: %s answers %+v, %s %+v", box, j, a.name, p, b.name, q)
			}
		}
		total += len(fa)
	}
	return total, nil
}

func fetchFeatures(ctx context.Context, t target, box string) ([]feature, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.url(box), nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s: %s", t.name, resp.Status, body)
	}
	fs, err := t.decode(body)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.name, err)
	}
	if n, ok := t.count(body); !ok || n != len(fs) {
		return nil, fmt.Errorf("%s: count %d (found %v) but %d features", t.name, n, ok, len(fs))
	}
	return fs, nil
}
