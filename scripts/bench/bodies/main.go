// Command bodies measures the resident memory (VmRSS) of `arr up` while
// many large request bodies are in flight at once: rounds of -concurrency
// concurrent POST /v1/messages bodies of -mb MB each (gpt-4.1-nano, held
// by a loopback upstream for -hold), from -keys keys. For each round it
// prints the process's RSS before, its peak while the round runs
// (sampled every 20 ms), after, and how the requests were answered
// (status counts). It asserts nothing. Every request goes to loopback
// servers it starts; the database is a fresh one on -database-url.
//
//	go run ./scripts/bench/bodies -arr /path/to/arr -concurrency 60,120 -repeat 3
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/arr-dev/arr/adapters/upstream/upstreamtest"
	"github.com/arr-dev/arr/scripts/bench/benchdb"
)

func main() {
	arrBin := flag.String("arr", "", "the arr binary (required)")
	admin := flag.String("database-url", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", "PostgreSQL server")
	levels := flag.String("concurrency", "60,120", "concurrent bodies per round, comma-separated")
	mb := flag.Float64("mb", 2.6, "size of each body in MB (2.6 fits gpt-4.1-nano's context; 3.9 MiB is refused 400 after parsing)")
	hold := flag.Duration("hold", 2*time.Second, "how long the upstream holds each request")
	keys := flag.Int("keys", 10, "keys the requests are spread over")
	repeat := flag.Int("repeat", 3, "fresh `arr up` processes per level")
	extra := flag.String("env", "", "extra environment of arr, comma-separated (e.g. ARR_GATEWAY_BODIES_MB=128)")
	flag.Parse()
	if *arrBin == "" {
		log.Fatal("-arr is required")
	}
	up, err := upstreamtest.New("127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	defer up.Close()
	up.Set("", upstreamtest.Behavior{Latency: *hold})
	text := strings.Repeat("lighthouse ", int(*mb*1e6/11))
	body, _ := json.Marshal(map[string]any{"model": "gpt-4.1-nano", "max_tokens": 16, "messages": []any{map[string]any{"role": "user", "content": text}}})
	var env []string
	if *extra != "" {
		env = strings.Split(*extra, ",")
	}
	fmt.Printf("bodies of %d bytes, held %s upstream, %d keys, env %v\n", len(body), *hold, *keys, env)
	fmt.Printf("%-12s %-4s %10s %10s %10s  %s\n", "concurrency", "run", "rss_before", "rss_peak", "rss_after", "answers")
	for _, f := range strings.Split(*levels, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			log.Fatal(err)
		}
		var peaks, afters []float64
		for r := 0; r < *repeat; r++ {
			before, peak, after, answers, err := round(*arrBin, *admin, up.URL, env, body, n, *keys)
			if err != nil {
				log.Fatal(err)
			}
			peaks, afters = append(peaks, peak), append(afters, after)
			fmt.Printf("%-12d %-4d %9.0fM %9.0fM %9.0fM  %v\n", n, r+1, before, peak, after, answers)
		}
		fmt.Printf("%-12d %-4s %10s %9.0fM %9.0fM  (medians)\n", n, "all", "", median(peaks), median(afters))
	}
}

// round starts a fresh `arr up`, sends n concurrent bodies and returns
// the RSS (MB) before, at its peak and 5 s after, and the answers by
// status.
func round(bin, admin, upstream string, extra []string, body []byte, n, nkeys int) (float64, float64, float64, map[int]int, error) {
	ctx := context.Background()
	bdb, err := benchdb.Create(ctx, admin, "arr_bench_bodies")
	if err != nil {
		return 0, 0, 0, nil, err
	}
	defer bdb.Close()
	db := bdb.URL
	dir, _ := os.MkdirTemp("", "arr-bench-bodies-")
	defer os.RemoveAll(dir)
	gw, an, rc := freeAddr(), freeAddr(), freeAddr()
	env := append(os.Environ(), "DATABASE_URL="+db, "ARR_DATA_DIR="+dir, "ARR_LOG_LEVEL=error", "ARR_DEMO_DATA=false",
		"ARR_GATEWAY_ADDR="+gw, "ARR_ANSWER_ADDR="+an, "ARR_RECORDS_ADDR="+rc, "ARR_UPSTREAM_BASE_URL="+upstream,
		"ARR_UPSTREAM_API_KEY=sk-bench", "ARR_UPSTREAM_TIMEOUT=60s")
	env = append(env, extra...)
	cmd := exec.Command(bin, "up")
	cmd.Env = env
	if err := cmd.Start(); err != nil {
		return 0, 0, 0, nil, err
	}
	defer func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() }()
	base := "http://" + gw
	if err := waitOK(base + "/healthz"); err != nil {
		return 0, 0, 0, nil, err
	}
	cli := func(args ...string) ([]byte, error) {
		c := exec.Command(bin, args...)
		c.Env = env
		return c.Output()
	}
	if _, err := cli("accounts", "create", "--email", "bench@example.com", "--plan", "enterprise", "--json"); err != nil {
		return 0, 0, 0, nil, fmt.Errorf("creating the account: %w", err)
	}
	var keys []string
	for i := 0; i < nkeys; i++ {
		out, err := cli("keys", "mint", "--email", "bench@example.com", "--service", "gateway", "--json")
		if err != nil {
			return 0, 0, 0, nil, fmt.Errorf("minting a key: %w", err)
		}
		var k struct {
			Secret string `json:"secret"`
		}
		_ = json.Unmarshal(out, &k)
		keys = append(keys, k.Secret)
	}
	time.Sleep(2 * time.Second) // let start-up settle
	before := rss(cmd.Process.Pid)
	stop := make(chan struct{})
	peakc := make(chan float64, 1)
	go func() {
		peak := before
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				peakc <- peak
				return
			case <-t.C:
				peak = max(peak, rss(cmd.Process.Pid))
			}
		}
	}()
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: n, MaxIdleConnsPerHost: n}, Timeout: 2 * time.Minute}
	var mu sync.Mutex
	answers := map[int]int{}
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodPost, base+"/v1/messages", bytes.NewReader(body))
			req.Header.Set("x-api-key", keys[i%len(keys)])
			req.Header.Set("anthropic-version", "2023-06-01")
			req.Header.Set("Content-Type", "application/json")
			status := -1
			if resp, err := client.Do(req); err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				status = resp.StatusCode
			}
			mu.Lock()
			answers[status]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	close(stop)
	peak := <-peakc
	time.Sleep(5 * time.Second)
	return before, peak, rss(cmd.Process.Pid), answers, nil
}

// rss is a process's VmRSS in MB (0 if unreadable).
func rss(pid int) float64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

func freeAddr() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func waitOK(u string) error {
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(u); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("%s not ready after 90s", u)
}
