// Command gateway benchmarks the routing gateway's overhead: the same
// chat completion sent straight to a loopback OpenAI-compatible upstream
// (upstreamtest), through `arr up` (model auto: auth, daily quota, routing,
// and every completion durably appended to the audit chain), and through
// Portkey's open-source gateway pointed at the same upstream. It reports
// p50, p99 and requests per second at each concurrency, and the overhead
// (gateway minus direct) at p50 and p99, and each gateway's CPU time per
// request (its process's user+system CPU seconds, from /proc/PID/stat,
// over the measured requests). With -repeat N every level is measured N
// times, the targets taking turns, and the table shows the median of each
// figure over the N rounds. It asserts nothing.
//
// Run it through scripts/bench/gateway.sh, which builds arr and installs
// Portkey.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/arr-dev/arr/adapters/upstream/upstreamtest"
)

func main() {
	var (
		dbURL   = flag.String("database-url", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", "PostgreSQL server; a fresh database is created on it and dropped after")
		arrBin  = flag.String("arr", "", "the arr binary")
		portkey = flag.String("portkey", "", "Portkey's build/start-server.js (empty: skip Portkey)")
		levels  = flag.String("concurrency", "1,64", "concurrency levels")
		n1      = flag.Int("n1", 2000, "requests per target at concurrency 1")
		nN      = flag.Int("n", 10000, "requests per target at higher concurrency")
		warm    = flag.Int("warmup", 300, "warm-up requests per target and level (not measured)")
		repeat  = flag.Int("repeat", 3, "rounds per level; the table shows each figure's median")
		jsonOut = flag.String("json", "", "also write the results as JSON here")
		phaseOn = flag.Bool("phases", false, "run arr with tracing on and print each completion's phases (median µs) from its spans; its figures are then not the gateway's best")
	)
	flag.Parse()
	if *arrBin == "" {
		log.Fatal("-arr is required")
	}
	ctx := context.Background()

	up, err := upstreamtest.New("127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	defer up.Close()

	db, drop, err := freshDatabase(ctx, *dbURL)
	if err != nil {
		log.Fatal(err)
	}
	defer drop()

	var ph *phases
	var traceEnv []string
	if *phaseOn {
		if ph, err = startPhases(); err != nil {
			log.Fatal(err)
		}
		defer ph.close()
		traceEnv = ph.env()
	}
	arrURL, key, limited, arrPID, stopArr, err := startArr(*arrBin, db, up.URL, traceEnv...)
	if err != nil {
		log.Fatal(err)
	}
	defer stopArr()

	targets := []target{
		{name: "direct (upstream)", url: up.URL + "/chat/completions", model: "gpt-4.1-nano"},
		{name: "arr gateway", url: arrURL + "/v1/chat/completions", model: "auto", headers: map[string]string{"Authorization": "Bearer " + key}, pid: arrPID},
		// The same key's work with every limit on it (a budget, requests
		// and tokens per minute), set so high it never refuses: each
		// request is admitted (its maximum cost reserved) and settled.
		{name: "arr, limited key", url: arrURL + "/v1/chat/completions", model: "auto", headers: map[string]string{"Authorization": "Bearer " + limited}, pid: arrPID},
	}
	if *portkey != "" {
		pkURL, pkPID, stopPK, err := startPortkey(*portkey)
		if err != nil {
			log.Fatal(err)
		}
		defer stopPK()
		targets = append(targets, target{name: "portkey 1.15.2", url: pkURL + "/v1/chat/completions", model: "gpt-4.1-nano", headers: map[string]string{
			"Authorization": "Bearer sk-bench", "x-portkey-provider": "openai", "x-portkey-custom-host": up.URL}, pid: pkPID})
	}

	var results []result
	for _, lv := range strings.Split(*levels, ",") {
		var c int
		fmt.Sscan(lv, &c)
		n := *nN
		if c == 1 {
			n = *n1
		}
		for round := 1; round <= max(*repeat, 1); round++ {
			for _, t := range targets {
				run(t, c, *warm)
				began := time.Now()
				r := run(t, c, n)
				if ph != nil && t.pid == arrPID && c == 1 {
					ph.measured(t.name, began)
				}
				r.target, r.concurrency, r.Round = t.name, c, round
				results = append(results, r)
				log.Printf("%-18s c=%-3d n=%-6d round %d  p50 %.3f ms  p99 %.3f ms  %.0f req/s  errors %d  CPU %s", t.name, c, n, round, r.P50, r.P99, r.RPS, r.Errors, cpuText(r.CPUPerReqMS))
			}
		}
	}
	report(results)
	if ph != nil {
		stopArr() // its last spans flushed
		ph.report()
	}
	precommit(ctx, db)
	if out, err := exec.Command(*arrBin, "audit", "verify").CombinedOutput(); err == nil {
		fmt.Printf("\n%s", out)
	} else {
		fmt.Printf("\narr audit verify FAILED: %v\n%s", err, out)
	}
	if *jsonOut != "" {
		b, _ := json.MarshalIndent(results, "", "  ")
		_ = os.WriteFile(*jsonOut, b, 0o644)
	}
}

type target struct {
	name, url, model string
	headers          map[string]string
	pid              int // the gateway's process, whose CPU time is read (0: none)
}

type result struct {
	target      string
	concurrency int
	Target      string  `json:"target"`
	Concurrency int     `json:"concurrency"`
	N           int     `json:"n"`
	P50         float64 `json:"p50_ms"`
	P99         float64 `json:"p99_ms"`
	RPS         float64 `json:"req_per_s"`
	Errors      int64   `json:"errors"`
	Round       int     `json:"round"`
	// CPUPerReqMS is the gateway process's CPU time (user+system) per
	// measured request, in ms; -1 when not measured.
	CPUPerReqMS float64 `json:"cpu_ms_per_request"`
}

// cpuSeconds reads a process's user+system CPU time from /proc/PID/stat.
func cpuSeconds(pid int) (float64, bool) {
	if pid == 0 {
		return 0, false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// The command name (field 2) is in parentheses and may hold spaces:
	// count the fields after its closing one. utime and stime are fields
	// 14 and 15, in clock ticks (USER_HZ, 100 on Linux).
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, false
	}
	var ut, st float64
	if _, err := fmt.Sscan(f[11], &ut); err != nil {
		return 0, false
	}
	if _, err := fmt.Sscan(f[12], &st); err != nil {
		return 0, false
	}
	return (ut + st) / 100, true
}

func cpuText(ms float64) string {
	if ms < 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f ms/req", ms)
}

func run(t target, c, n int) result {
	body, _ := json.Marshal(map[string]any{"model": t.model, "messages": []any{map[string]any{"role": "user", "content": "Say hello"}}})
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: c + 8, MaxIdleConns: c + 8}}
	defer client.CloseIdleConnections()
	lat := make([]time.Duration, n)
	var next, errs atomic.Int64
	var wg sync.WaitGroup
	cpu0, cpuOK := cpuSeconds(t.pid)
	start := time.Now()
	for w := 0; w < c; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				req, _ := http.NewRequest(http.MethodPost, t.url, bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				for k, v := range t.headers {
					req.Header.Set(k, v)
				}
				s := time.Now()
				resp, err := client.Do(req)
				if err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						err = fmt.Errorf("status %d", resp.StatusCode)
					}
				}
				lat[i] = time.Since(s)
				if err != nil {
					if errs.Add(1) == 1 {
						log.Printf("%s: %v", t.name, err)
					}
				}
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	cpuPer := -1.0
	if cpu1, ok := cpuSeconds(t.pid); ok && cpuOK {
		cpuPer = (cpu1 - cpu0) * 1000 / float64(n)
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	pct := func(p float64) float64 { return float64(lat[int(p*float64(n-1))].Microseconds()) / 1000 }
	return result{N: n, P50: pct(0.50), P99: pct(0.99), RPS: float64(n) / took.Seconds(), Errors: errs.Load(), CPUPerReqMS: cpuPer}
}

// report prints, per target and level, the median over the rounds of
// each figure; the overheads are medians of the per-round differences
// from the direct calls of the same round.
func report(rs []result) {
	type key struct {
		target string
		c      int
	}
	direct := map[[2]int]result{} // concurrency, round
	for i := range rs {
		r := &rs[i]
		r.Target, r.Concurrency = r.target, r.concurrency
		if strings.HasPrefix(r.target, "direct") {
			direct[[2]int{r.concurrency, r.Round}] = *r
		}
	}
	var order []key
	byKey := map[key][]result{}
	for _, r := range rs {
		k := key{r.target, r.concurrency}
		if _, ok := byKey[k]; !ok {
			order = append(order, k)
		}
		byKey[k] = append(byKey[k], r)
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "target\tconcurrency\tn\trounds\tp50 ms\tp99 ms\treq/s\terrors\toverhead p50 ms\toverhead p99 ms\tCPU ms/req\t")
	for _, k := range order {
		g := byKey[k]
		pick := func(f func(r result) float64) float64 {
			v := make([]float64, len(g))
			for i, r := range g {
				v[i] = f(r)
			}
			return median(v)
		}
		var errs int64
		for _, r := range g {
			errs += r.Errors
		}
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%.3f\t%.3f\t%.0f\t%d\t%.3f\t%.3f\t%s\t\n", k.target, k.c, g[0].N, len(g),
			pick(func(r result) float64 { return r.P50 }), pick(func(r result) float64 { return r.P99 }),
			pick(func(r result) float64 { return r.RPS }), errs,
			pick(func(r result) float64 { return r.P50 - direct[[2]int{r.concurrency, r.Round}].P50 }),
			pick(func(r result) float64 { return r.P99 - direct[[2]int{r.concurrency, r.Round}].P99 }),
			cpuText(pick(func(r result) float64 { return r.CPUPerReqMS })))
	}
	w.Flush()
}

func median(v []float64) float64 {
	sort.Float64s(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// precommit reports, from the audit read model, how long arr spent on a
// completion before its audit entry was appended (payload total_ms: auth,
// quota, routing, the upstream call and the reply's parsing) next to the
// upstream's own time (upstream_ms), so the rest of the overhead is the
// durable commit of the chain.
func precommit(ctx context.Context, db string) {
	conn, err := pgx.Connect(ctx, db)
	if err != nil {
		return
	}
	defer conn.Close(ctx)
	time.Sleep(2 * time.Second) // let the audit projection catch up
	var n int64
	var p50, p99, up50 float64
	err = conn.QueryRow(ctx, `SELECT count(*),
		percentile_cont(0.5) WITHIN GROUP (ORDER BY (payload->>'total_ms')::float8),
		percentile_cont(0.99) WITHIN GROUP (ORDER BY (payload->>'total_ms')::float8),
		percentile_cont(0.5) WITHIN GROUP (ORDER BY (payload->>'upstream_ms')::float8)
		FROM rm_audit.entries`).Scan(&n, &p50, &p99, &up50)
	if err != nil {
		fmt.Printf("\n(audit read model not readable: %v)\n", err)
		return
	}
	fmt.Printf("\narr, all runs (%d completions): time in the gateway before the audit append p50 %.3f ms, p99 %.3f ms (upstream's own p50 %.3f ms); the rest of arr's latency is waiting for the chain's durable commit\n", n, p50, p99, up50)
}

func freshDatabase(ctx context.Context, admin string) (string, func(), error) {
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return "", nil, fmt.Errorf("PostgreSQL at %s: %w", admin, err)
	}
	name := fmt.Sprintf("arr_bench_gw_%d", time.Now().UnixNano())
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		conn.Close(ctx)
		return "", nil, err
	}
	u, _ := url.Parse(admin)
	u.Path = "/" + name
	return u.String(), func() {
		_, _ = conn.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		conn.Close(context.Background())
	}, nil
}

func freeAddr() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func startArr(bin, db, upstreamURL string, extraEnv ...string) (string, string, string, int, func(), error) {
	gw, an, rc := freeAddr(), freeAddr(), freeAddr()
	dir, _ := os.MkdirTemp("", "arr-bench-")
	// No demo data: its projection would still be catching up while the
	// gateway is measured.
	env := append(os.Environ(), "DATABASE_URL="+db, "ARR_DATA_DIR="+dir, "ARR_LOG_LEVEL=warn", "ARR_DEMO_DATA=false",
		"ARR_GATEWAY_ADDR="+gw, "ARR_ANSWER_ADDR="+an, "ARR_RECORDS_ADDR="+rc, "ARR_UPSTREAM_BASE_URL="+upstreamURL)
	env = append(env, extraEnv...)
	os.Setenv("DATABASE_URL", db) // for the closing `arr audit verify`
	cmd := exec.Command(bin, "up")
	cmd.Env = env
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return "", "", "", 0, nil, err
	}
	var once sync.Once
	stop := func() {
		once.Do(func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			_ = cmd.Wait()
			os.RemoveAll(dir)
		})
	}
	base := "http://" + gw
	if err := waitOK(base + "/healthz"); err != nil {
		stop()
		return "", "", "", 0, nil, err
	}
	cli := func(args ...string) ([]byte, error) {
		c := exec.Command(bin, args...)
		c.Env = env
		return c.Output()
	}
	if _, err := cli("accounts", "create", "--email", "bench@example.com", "--plan", "enterprise", "--json"); err != nil {
		stop()
		return "", "", "", 0, nil, fmt.Errorf("creating the bench account: %w", err)
	}
	var keys [2]string
	for i, limits := range [][]string{nil, {"--max-budget-usd", "1000000", "--budget-period", "month", "--rpm", "100000000", "--tpm", "100000000000"}} {
		out, err := cli(append([]string{"keys", "mint", "--email", "bench@example.com", "--service", "gateway", "--json"}, limits...)...)
		if err != nil {
			stop()
			return "", "", "", 0, nil, fmt.Errorf("minting a key: %w", err)
		}
		var k struct {
			Secret string `json:"secret"`
		}
		_ = json.Unmarshal(out, &k)
		keys[i] = k.Secret
	}
	return base, keys[0], keys[1], cmd.Process.Pid, stop, nil
}

func startPortkey(script string) (string, int, func(), error) {
	addr := freeAddr()
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command("node", script, "--port="+port, "--headless")
	cmd.Env = append(os.Environ(), "NODE_ENV=production")
	if err := cmd.Start(); err != nil {
		return "", 0, nil, err
	}
	stop := func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() }
	base := "http://127.0.0.1:" + port
	if err := waitOK(base + "/"); err != nil {
		stop()
		return "", 0, nil, fmt.Errorf("portkey: %w", err)
	}
	return base, cmd.Process.Pid, stop, nil
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
