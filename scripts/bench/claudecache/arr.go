package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// benchModel is a Claude model of the bench's catalog, at Anthropic's
// list prices (domain/routing/catalog.json), in US dollars per 1,000
// tokens.
type benchModel struct {
	ID, Upstream, Tier, Alias string
	In, Out, Cached, Write    float64
}

// benchModels are the catalog: one Claude model per tier, each named by
// the alias Claude Code's model names match, so every request goes to
// the Claude model of its family and through the pass-through.
var benchModels = []benchModel{
	{ID: "claude-3-5-haiku", Upstream: "claude-3-5-haiku-latest", Tier: "small", Alias: "claude-*haiku*", In: 0.0008, Out: 0.004, Cached: 0.00008, Write: 0.001},
	{ID: "claude-sonnet-4", Upstream: "claude-sonnet-4-0", Tier: "mid", Alias: "claude-*sonnet*", In: 0.003, Out: 0.015, Cached: 0.0003, Write: 0.00375},
	{ID: "claude-opus-4", Upstream: "claude-opus-4-0", Tier: "high", Alias: "claude-*opus*", In: 0.015, Out: 0.075, Cached: 0.0015, Write: 0.01875},
}

// upstreamKeyEnv names the variable of the stand-in's API key (it refuses
// a request without x-api-key).
const upstreamKeyEnv = "ARR_BENCH_UPSTREAM_KEY"

func writeCatalog(file, baseURL string) error {
	var tiers []any
	aliases := map[string]string{}
	for _, m := range benchModels {
		tiers = append(tiers, map[string]any{"name": m.Tier, "models": []any{map[string]any{
			"id": m.ID, "vendor": "anthropic", "api": "anthropic", "upstream_model": m.Upstream, "base_url": baseURL,
			"api_key_env": upstreamKeyEnv, "input_usd_per_1k": m.In, "output_usd_per_1k": m.Out,
			"cached_input_usd_per_1k": m.Cached, "cache_write_usd_per_1k": m.Write, "quality": 0.9, "context_window": 200000,
		}}})
		aliases[m.Alias] = m.ID
	}
	b, err := json.MarshalIndent(map[string]any{"tiers": tiers, "aliases": aliases}, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(file, b, 0o600)
}

func freshDatabase(ctx context.Context, admin string) (string, func(), error) {
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return "", nil, fmt.Errorf("PostgreSQL at %s: %w", admin, err)
	}
	name := fmt.Sprintf("arr_bench_cc_%d", time.Now().UnixNano())
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

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// arrProc is a running `arr up` and the bench account's gateway key.
type arrProc struct {
	addr, key string
	stop      func()
}

func startArr(bin, db, catalog, tmp string) (*arrProc, error) {
	var addrs [3]string
	for i := range addrs {
		a, err := freeAddr()
		if err != nil {
			return nil, err
		}
		addrs[i] = a
	}
	dir := filepath.Join(tmp, "arr-data")
	env := append(os.Environ(), "DATABASE_URL="+db, "ARR_DATA_DIR="+dir, "ARR_LOG_LEVEL=warn", "ARR_DEMO_DATA=false",
		"ARR_GATEWAY_ADDR="+addrs[0], "ARR_ANSWER_ADDR="+addrs[1], "ARR_RECORDS_ADDR="+addrs[2],
		"ARR_CATALOG="+catalog, upstreamKeyEnv+"=sk-bench")
	cmd := exec.Command(bin, "up")
	cmd.Env = env
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	var once sync.Once
	a := &arrProc{addr: addrs[0], stop: func() {
		once.Do(func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() })
	}}
	if err := waitOK("http://" + a.addr + "/healthz"); err != nil {
		a.stop()
		return nil, err
	}
	key, err := mintKey(bin, env)
	if err != nil {
		a.stop()
		return nil, err
	}
	a.key = key
	return a, nil
}

func mintKey(bin string, env []string) (string, error) {
	cli := func(args ...string) ([]byte, error) {
		c := exec.Command(bin, args...)
		c.Env = env
		c.Stderr = os.Stderr
		return c.Output()
	}
	if _, err := cli("accounts", "create", "--email", "bench@example.com", "--plan", "enterprise", "--json"); err != nil {
		return "", fmt.Errorf("creating the bench account: %w", err)
	}
	out, err := cli("keys", "mint", "--email", "bench@example.com", "--service", "gateway", "--json")
	if err != nil {
		return "", fmt.Errorf("minting a gateway key: %w", err)
	}
	var k struct {
		Secret string `json:"secret"`
	}
	if err := json.Unmarshal(out, &k); err != nil || k.Secret == "" {
		return "", fmt.Errorf("arr keys mint printed %q: %v", out, err)
	}
	return k.Secret, nil
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

// usage prints the key's GET /v1/usage total: the usage rollup's view of
// the same calls.
func usage(w io.Writer, a *arrProc) {
	req, _ := http.NewRequest(http.MethodGet, "http://"+a.addr+"/v1/usage?days=1", nil)
	req.Header.Set("Authorization", "Bearer "+a.key)
	var r struct {
		Total struct {
			Requests   int64   `json:"requests"`
			Prompt     int64   `json:"prompt_tokens"`
			CacheRead  int64   `json:"cache_read_tokens"`
			CacheWrite int64   `json:"cache_write_tokens"`
			CostUSD    float64 `json:"cost_usd"`
		} `json:"total"`
	}
	resp, err := http.DefaultClient.Do(req)
	if err == nil {
		defer resp.Body.Close()
		err = json.NewDecoder(resp.Body).Decode(&r)
	}
	if err != nil {
		fmt.Fprintf(w, "(GET /v1/usage not readable: %v)\n", err)
		return
	}
	t := r.Total
	fmt.Fprintf(w, "GET /v1/usage (the rollup, same key): %d requests, prompt %d tokens, cache read %d, cache write %d, cost $%.6f\n",
		t.Requests, t.Prompt, t.CacheRead, t.CacheWrite, t.CostUSD)
}
