// Command answer benchmarks the answer service; see scripts/bench/answer.sh.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/commands/research/researchtest"
)

type cleaner struct{ fns []func() }

func (c *cleaner) Cleanup(f func()) { c.fns = append(c.fns, f) }
func (c *cleaner) run() {
	for i := len(c.fns) - 1; i >= 0; i-- {
		c.fns[i]()
	}
}

func main() {
	dbURL := flag.String("database-url", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", "admin URL of a PostgreSQL where a bench database may be created")
	requests := flag.Int("requests", 20000, "cache-hit requests")
	conc := flag.Int("concurrency", 64, "concurrent clients")
	cold := flag.Int("cold", 10, "cold (uncached) questions")
	flag.Parse()
	if err := run(*dbURL, *requests, *conc, *cold); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func freeAddr() string {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	defer ln.Close()
	return ln.Addr().String()
}

func run(adminURL string, requests, conc, cold int) error {
	ctx := context.Background()
	c := &cleaner{}
	defer c.run()
	dir, err := os.MkdirTemp("", "arr-bench-answer-")
	if err != nil {
		return err
	}
	c.Cleanup(func() { os.RemoveAll(dir) })
	bin := filepath.Join(dir, "arr")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/arr").CombinedOutput(); err != nil {
		return fmt.Errorf("building arr: %v\n%s", err, out)
	}
	admin, err := pgxpool.New(ctx, adminURL)
	if err != nil {
		return err
	}
	defer admin.Close()
	db := fmt.Sprintf("arr_bench_answer_%d", time.Now().UnixNano())
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+db); err != nil {
		return err
	}
	c.Cleanup(func() { _, _ = admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+db+" WITH (FORCE)") })
	u, _ := url.Parse(adminURL)
	u.Path = "/" + db
	benchURL := u.String()

	web := researchtest.NewWeb(c)
	sx := researchtest.NewSearXNG(c, web)
	model := researchtest.NewLLM(c)
	a, g, r := freeAddr(), freeAddr(), freeAddr()
	env := append(os.Environ(), "DATABASE_URL="+benchURL, "ARR_DATA_DIR="+dir, "ARR_LOG_LEVEL=warn",
		"ARR_ANSWER_ADDR="+a, "ARR_GATEWAY_ADDR="+g, "ARR_RECORDS_ADDR="+r, "ARR_SEARCH=searxng", "SEARXNG_URL="+sx.URL,
		"ARR_ANSWER_LLM_BASE_URL="+model.BaseURL(), "ARR_ANSWER_FETCH_PRIVATE=allow", "ARR_ANSWER_SEED=off",
		// The demo parcels would load (and be projected) during the measurement.
		"ARR_DEMO_DATA=false")
	cli := func(args ...string) ([]byte, error) {
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		return cmd.Output()
	}
	up := exec.Command(bin, "up")
	up.Env = env
	up.Stderr = os.Stderr
	if err := up.Start(); err != nil {
		return err
	}
	c.Cleanup(func() { _ = up.Process.Signal(os.Interrupt); _ = up.Wait() })
	base := "http://" + a
	for i := 0; ; i++ {
		if resp, err := http.Get(base + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if i > 600 {
			return fmt.Errorf("arr up did not become healthy")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if _, err := cli("accounts", "create", "--email", "bench@example.com", "--plan", "enterprise", "--json"); err != nil {
		return fmt.Errorf("creating the account: %w", err)
	}
	out, err := cli("keys", "mint", "--email", "bench@example.com", "--service", "answer", "--json")
	if err != nil {
		return fmt.Errorf("minting: %w", err)
	}
	var key struct{ Secret string }
	if err := json.Unmarshal(out, &key); err != nil {
		return err
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conc * 2}}
	ask := func(q string) (time.Duration, bool, error) {
		body, _ := json.Marshal(map[string]string{"q": q})
		req, _ := http.NewRequest(http.MethodPost, base+"/api/v1/answer", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key.Secret)
		req.Header.Set("Content-Type", "application/json")
		t := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			return 0, false, err
		}
		var ab struct {
			Cached bool `json:"cached"`
		}
		err = json.NewDecoder(resp.Body).Decode(&ab)
		resp.Body.Close()
		took := time.Since(t)
		if resp.StatusCode != 200 {
			return took, false, fmt.Errorf("status %d", resp.StatusCode)
		}
		return took, ab.Cached, err
	}

	// Cold path.
	questions := []string{"What causes spring tides?", "What are neap tides?", "How large is the tidal range in the Bay of Fundy?",
		"How long does the Moon take to orbit the Earth?", "Why does bread rise?", "What does gluten do in dough?",
		"How many high tides a day does a coast see?", "Why do two tidal bulges form?", "What is a lunar day?", "Why are some tides bigger than others?"}
	var coldTimes []time.Duration
	for i := 0; i < cold; i++ {
		q := questions[i%len(questions)]
		if i >= len(questions) {
			q = fmt.Sprintf("%s (%d)", q, i)
		}
		took, cached, err := ask(q)
		if err != nil || cached {
			return fmt.Errorf("cold ask %q: cached=%v %v", q, cached, err)
		}
		coldTimes = append(coldTimes, took)
	}
	pool, err := pgxpool.New(ctx, benchURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	stages := []string{"search_us", "fetch_us", "extract_us", "rank_us", "synthesis_us", "total_us"}
	fmt.Printf("cold path, %d questions (quick, free; loopback stand-ins), median / max per stage in ms (from the events' costs):\n", cold)
	for _, s := range stages {
		var med, mx float64
		if err := pool.QueryRow(ctx, `SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY (data::jsonb->'costs'->>$1)::float), max((data::jsonb->'costs'->>$1)::float)
			FROM events WHERE event_type = 'AnswerSynthesized'`, s).Scan(&med, &mx); err != nil {
			return err
		}
		fmt.Printf("  %-13s %7.2f / %7.2f\n", strings.TrimSuffix(s, "_us"), med/1000, mx/1000)
	}
	fmt.Printf("  HTTP end to end (incl. event append and read-your-writes wait): p50 %s, max %s\n", pct(coldTimes, 50), pct(coldTimes, 100))

	// Cache hits.
	for i := 0; i < 200; i++ { // warm up connections
		if _, _, err := ask(questions[0]); err != nil {
			return err
		}
	}
	times := make([]time.Duration, requests)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	next := make(chan int, requests)
	for i := 0; i < requests; i++ {
		next <- i
	}
	close(next)
	start := time.Now()
	for w := 0; w < conc; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				took, cached, err := ask(questions[i%len(questions)])
				if err == nil && !cached {
					err = fmt.Errorf("not cached")
				}
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
				}
				times[i] = took
			}
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	if firstErr != nil {
		return fmt.Errorf("cache-hit run: %w", firstErr)
	}
	fmt.Printf("cache hits: %d requests, %d concurrent: p50 %s, p90 %s, p99 %s, max %s; %.0f req/s\n", requests, conc,
		pct(times, 50), pct(times, 90), pct(times, 99), pct(times, 100), float64(requests)/wall.Seconds())
	fmt.Printf("stand-in hits during the cache-hit run: search %d, model %d (all from the cold path)\n", sx.Hits(), model.Hits())
	return nil
}

func pct(ds []time.Duration, p int) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	if len(s) == 0 {
		return 0
	}
	i := (len(s)*p+99)/100 - 1
	return s[max(0, min(i, len(s)-1))].Round(10 * time.Microsecond)
}
