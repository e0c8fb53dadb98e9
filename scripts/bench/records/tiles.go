package main

import (
	"fmt"
	"io"
	"log"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The tile phase: clients that pan and zoom a map over the synthetic
// county, from zoom tileMinZoom to tileMaxZoom, arr's tile route beside
// pg_tileserv serving the same rm_parcels.parcels table.
const (
	tileMinZoom = 10
	tileMaxZoom = 16
	// A map of 1024 x 768 pixels shows 4 x 3 tiles of 256.
	viewW, viewH = 4, 3
	// pansPerZoom is how many one-tile pans a client makes before it
	// zooms in or out by one.
	pansPerZoom = 8
)

// tileTarget is one tile server under load.
type tileTarget struct {
	name string
	url  func(z, x, y int) string
	// ok says whether an answer is a tile (an empty one too).
	ok func(status int) bool
}

func arrTileTarget(base string) tileTarget {
	return tileTarget{name: "arr", url: func(z, x, y int) string { return fmt.Sprintf("%s/api/v1/tiles/%d/%d/%d.mvt", base, z, x, y) },
		ok: func(st int) bool { return st == http.StatusOK || st == http.StatusNoContent }}
}

// pgTileservTarget asks pg_tileserv for the table's layer with the same
// properties arr's parcel features carry (arr's score it cannot make).
func pgTileservTarget(base string) tileTarget {
	return tileTarget{name: "pg_tileserv", url: func(z, x, y int) string {
		return fmt.Sprintf("%s/rm_parcels.parcels/%d/%d/%d.pbf?properties=apn,county,layers", base, z, x, y)
	}, ok: func(st int) bool { return st == http.StatusOK }}
}

// tileOf is the tile of zoom z holding lon, lat.
func tileOf(lon, lat float64, z int) (int, int) {
	n := math.Exp2(float64(z))
	r := lat * math.Pi / 180
	return int((lon + 180) / 360 * n), int((1 - math.Log(math.Tan(r)+1/math.Cos(r))/math.Pi) / 2 * n)
}

// countyTiles is the range of tiles of zoom z touching the county.
func countyTiles(z int) (x0, y0, x1, y1 int) {
	x0, y1 = tileOf(west, south, z)
	x1, y0 = tileOf(west+side, south+side, z)
	return
}

// panner is one client's map: its zoom, the tile at the viewport's top
// left, its heading, and the tiles it already holds (a map does not ask
// again for a tile it shows or showed).
type panner struct {
	r      *rand.Rand
	z      int
	x, y   int
	dx, dy int
	pans   int
	held   map[[3]int]bool
}

func newPanner(seed uint64) *panner {
	p := &panner{r: rand.New(rand.NewPCG(seed, 11)), held: map[[3]int]bool{}}
	p.z = tileMinZoom + p.r.IntN(tileMaxZoom-tileMinZoom+1)
	x0, y0, x1, y1 := countyTiles(p.z)
	p.x, p.y = x0+p.r.IntN(x1-x0+1), y0+p.r.IntN(y1-y0+1)
	p.turn()
	return p
}

func (p *panner) turn() {
	for p.dx == 0 && p.dy == 0 {
		p.dx, p.dy = p.r.IntN(3)-1, p.r.IntN(3)-1
	}
}

// next moves the map (a pan of one tile, or a zoom) and returns the
// tiles of the county it shows that it does not hold yet.
func (p *panner) next() [][3]int {
	if p.pans++; p.pans > pansPerZoom {
		p.pans = 0
		nz := p.z + 1 - 2*p.r.IntN(2)
		if nz < tileMinZoom || nz > tileMaxZoom {
			nz = 2*p.z - nz
		}
		cx, cy := p.x+viewW/2, p.y+viewH/2
		if nz > p.z {
			cx, cy = 2*cx, 2*cy
		} else {
			cx, cy = cx/2, cy/2
		}
		p.z, p.x, p.y = nz, cx-viewW/2, cy-viewH/2
	} else {
		if p.r.IntN(5) == 0 {
			p.dx, p.dy = 0, 0
			p.turn()
		}
		p.x, p.y = p.x+p.dx, p.y+p.dy
	}
	// Back inside the county: turn around at its edge.
	x0, y0, x1, y1 := countyTiles(p.z)
	if p.x+viewW-1 < x0 || p.x > x1 {
		p.dx = -p.dx
		p.x = min(max(p.x, x0-viewW+1), x1)
	}
	if p.y+viewH-1 < y0 || p.y > y1 {
		p.dy = -p.dy
		p.y = min(max(p.y, y0-viewH+1), y1)
	}
	var out [][3]int
	for j := 0; j < viewH; j++ {
		for i := 0; i < viewW; i++ {
			t := [3]int{p.z, p.x + i, p.y + j}
			if t[1] < x0 || t[1] > x1 || t[2] < y0 || t[2] > y1 || p.held[t] {
				continue
			}
			p.held[t] = true
			out = append(out, t)
		}
	}
	return out
}

// tileLevel is one tile measurement.
type tileLevel struct {
	level
	Bytes     float64 `json:"mean_bytes_per_tile"`
	Distinct  int     `json:"distinct_tiles"`
	CacheHits int64   `json:"cache_hits"`
	ByZoom    []int   `json:"tiles_by_zoom"`
}

// measureTiles runs conc panning clients against t for dur. Client w of
// round r pans from seed (r, w), so every server is asked the same tiles
// in the same order in a round (as far as it gets in dur), and each round
// pans other paths. Hits are the answers arr marked X-Tile-Cache: hit.
func measureTiles(t tileTarget, round, conc int, dur time.Duration) (tileLevel, error) {
	var (
		mu       sync.Mutex
		lat      []time.Duration
		distinct = map[[3]int]bool{}
		byZoom   = make([]int, tileMaxZoom+1)
		bytes    atomic.Int64
		hits     atomic.Int64
		failures atomic.Int64
		firstErr atomic.Value
		wg       sync.WaitGroup
	)
	deadline := time.Now().Add(dur)
	start := time.Now()
	for w := 0; w < conc; w++ {
		wg.Add(1)
		go func(seed uint64) {
			defer wg.Done()
			client := clientFrom(int(seed & 0xffff))
			defer client.CloseIdleConnections()
			p := newPanner(seed)
			var mine []time.Duration
			var asked [][3]int
			for time.Now().Before(deadline) {
				for _, tl := range p.next() {
					if !time.Now().Before(deadline) {
						break
					}
					t0 := time.Now()
					resp, err := client.Get(t.url(tl[0], tl[1], tl[2]))
					if err != nil {
						failures.Add(1)
						firstErr.CompareAndSwap(nil, err)
						continue
					}
					n, _ := io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					mine = append(mine, time.Since(t0))
					if !t.ok(resp.StatusCode) {
						failures.Add(1)
						firstErr.CompareAndSwap(nil, fmt.Errorf("%s %v: %s", t.name, tl, resp.Status))
						continue
					}
					bytes.Add(n)
					if resp.Header.Get("X-Tile-Cache") == "hit" {
						hits.Add(1)
					}
					asked = append(asked, tl)
				}
			}
			mu.Lock()
			lat = append(lat, mine...)
			for _, tl := range asked {
				distinct[tl] = true
				byZoom[tl[0]]++
			}
			mu.Unlock()
		}(uint64(round)<<32 | uint64(w))
	}
	wg.Wait()
	elapsed := time.Since(start)
	if f := failures.Load(); f > 0 {
		return tileLevel{}, fmt.Errorf("%s at %d clients: %d tile requests failed, first: %v", t.name, conc, f, firstErr.Load())
	}
	slices.Sort(lat)
	pct := func(p float64) float64 {
		if len(lat) == 0 {
			return 0
		}
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
	}
	l := tileLevel{level: level{Server: t.name, Concurrency: conc, Requests: len(lat), RequestsPerSec: float64(len(lat)) / elapsed.Seconds(),
		P50ms: pct(0.50), P99ms: pct(0.99)}, Distinct: len(distinct), CacheHits: hits.Load(), ByZoom: byZoom[tileMinZoom:]}
	if len(lat) > 0 {
		l.Bytes = float64(bytes.Load()) / float64(len(lat))
	}
	return l, nil
}

// tileRounds measures arr and pg_tileserv (when running) at conc
// clients, rounds times, taking turns (which goes first alternates).
// arr's cache is not emptied between rounds (no load completes): each
// round finds what the earlier rounds' other paths left, as a running
// server would, and its hit rate is printed with it.
func tileRounds(targets []tileTarget, conc, rounds int, dur time.Duration) ([]tileLevel, error) {
	var out []tileLevel
	for r := 1; r <= rounds; r++ {
		order := slices.Clone(targets)
		if r%2 == 0 {
			slices.Reverse(order)
		}
		for _, t := range order {
			l, err := measureTiles(t, r, conc, dur)
			if err != nil {
				return nil, err
			}
			l.Round = r
			out = append(out, l)
			hit := ""
			if t.name == "arr" {
				hit = fmt.Sprintf(", cache hits %.1f%%", 100*float64(l.CacheHits)/float64(max(1, l.Requests)))
			}
			log.Printf("round %d, tiles %s at %d clients: %d tiles (%d distinct, by zoom %d-%d: %v), %.0f tiles/s, p50 %.2f ms, p99 %.2f ms, %.0f bytes/tile%s",
				r, t.name, conc, l.Requests, l.Distinct, tileMinZoom, tileMaxZoom, l.ByZoom, l.RequestsPerSec, l.P50ms, l.P99ms, l.Bytes, hit)
		}
	}
	return out, nil
}

// startTileserv starts pg_tileserv with the config file records.sh wrote
// and waits (at most 30 s) until it publishes rm_parcels.parcels. The
// returned stop ends it by its PID.
func startTileserv(bin, config, base, logPath string) (stop func(), err error) {
	return startServer("pg_tileserv", bin, config, base+"/rm_parcels.parcels.json", logPath)
}

// tilePhase measures the tiles: arr's route and, with -tileserv,
// pg_tileserv on the same table, at -tile-clients panning clients.
func tilePhase(o options, arrBase string, res *result) error {
	if o.tileClients < 1 {
		return nil
	}
	targets := []tileTarget{arrTileTarget(arrBase)}
	if o.tileserv != "" {
		dir, err := os.MkdirTemp("", "arr-bench-pg-tileserv-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		stop, err := startTileserv(o.tileserv, o.tileservCfg, o.tileservURL, dir+"/pg_tileserv.log")
		if err != nil {
			return err
		}
		defer stop()
		targets = append(targets, pgTileservTarget(o.tileservURL))
	}
	ls, err := tileRounds(targets, o.tileClients, o.rounds, o.dur)
	res.TileLevels = ls
	return err
}

// tileSummary is the medians of one server's tile rounds.
func tileSummary(res *result, server string) (s summary, hitRate, bytes float64) {
	var ls []level
	var hits, reqs int64
	var bs []level
	for _, l := range res.TileLevels {
		if l.Server == server {
			ls = append(ls, l.level)
			hits += l.CacheHits
			reqs += int64(l.Requests)
			bs = append(bs, level{FeaturesPerResp: l.Bytes})
		}
	}
	s = summarize(ls, server, ls[0].Concurrency)
	return s, 100 * float64(hits) / float64(max(1, reqs)), median(bs, func(l level) float64 { return l.FeaturesPerResp })
}

// reportTiles prints the tile phase's table.
func reportTiles(o options, res *result) {
	if len(res.TileLevels) == 0 {
		return
	}
	fmt.Printf("tiles: %d clients panning a %dx%d-tile map over the county (one-tile pans, a zoom in or out every %d), z%d-z%d, never asking again for a tile they hold; %s per round, medians of %d rounds:\n",
		o.tileClients, viewW, viewH, pansPerZoom, tileMinZoom, tileMaxZoom, o.dur, o.rounds)
	fmt.Printf("%-16s %10s %10s %10s %12s %s\n", "server", "tiles/s", "p50 ms", "p99 ms", "bytes/tile", "per round")
	for _, name := range []string{"arr", "pg_tileserv"} {
		var rounds []string
		for _, l := range res.TileLevels {
			if l.Server == name {
				r := fmt.Sprintf("r%d: %d tiles, %d distinct", l.Round, l.Requests, l.Distinct)
				if name == "arr" {
					r += fmt.Sprintf(", %.1f%% cache hits", 100*float64(l.CacheHits)/float64(max(1, l.Requests)))
				}
				rounds = append(rounds, r)
			}
		}
		if len(rounds) == 0 {
			continue
		}
		s, _, b := tileSummary(res, name)
		fmt.Printf("%-16s %10.0f %10.2f %10.2f %12.0f %s\n", name, s.RequestsPerSec, s.P50ms, s.P99ms, b, strings.Join(rounds, "; "))
	}
	_, hit, _ := tileSummary(res, "arr")
	fmt.Printf("arr's tile cache answered %.1f%% of the tile requests of all rounds\n", hit)
}

// reportTilesLine prints the tiles' summary line, when both servers were
// measured.
func reportTilesLine(o options, res *result) {
	has := func(name string) bool {
		return slices.ContainsFunc(res.TileLevels, func(l tileLevel) bool { return l.Server == name })
	}
	if !has("arr") || !has("pg_tileserv") {
		return
	}
	a, _, _ := tileSummary(res, "arr")
	p, _, _ := tileSummary(res, "pg_tileserv")
	fmt.Printf("records tiles at %d clients: arr p99 %.2f ms, %.0f tiles/s; pg_tileserv p99 %.2f ms, %.0f tiles/s\n",
		o.tileClients, a.P99ms, a.RequestsPerSec, p.P99ms, p.RequestsPerSec)
}
