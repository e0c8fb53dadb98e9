package main

import (
	"bufio"
	"bytes"
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
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// arr is one `arr up` on a fresh database, with an answer key. Its
// methods are safe for concurrent use.
type arr struct {
	bin    string
	env    []string
	base   string // the answer service
	key    string
	client *http.Client
}

// cleanups runs its functions in reverse order.
type cleanups []func()

func (c *cleanups) add(f func()) { *c = append(*c, f) }
func (c *cleanups) run() {
	for i := len(*c) - 1; i >= 0; i-- {
		(*c)[i]()
	}
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("finding a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// startArr creates a database, runs `arr up` on it with the answer
// service searching its local index and no language model configured (the
// default: no model is called and answers are extractive), and mints an
// answer key. Everything it starts is
// stopped by cu.
func startArr(ctx context.Context, o options, dir string, cu *cleanups) (*arr, error) {
	admin, err := pgxpool.New(ctx, o.dbURL)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", redact(o.dbURL), err)
	}
	cu.add(admin.Close)
	db := fmt.Sprintf("arr_eval_answer_%d", time.Now().UnixNano())
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+db); err != nil {
		return nil, fmt.Errorf("creating the eval database: %w", err)
	}
	cu.add(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+db+" WITH (FORCE)"); err != nil {
			fmt.Fprintf(os.Stderr, "answer eval: dropping %s: %v\n", db, err)
		}
	})
	u, err := url.Parse(o.dbURL)
	if err != nil {
		return nil, fmt.Errorf("parsing the database URL: %w", err)
	}
	u.Path = "/" + db
	var addrs [3]string
	for i := range addrs {
		if addrs[i], err = freeAddr(); err != nil {
			return nil, err
		}
	}
	seed := "off"
	if o.seeded {
		seed = "on"
	}
	a := &arr{bin: o.arrBin, base: "http://" + addrs[0], client: &http.Client{Timeout: 90 * time.Second}}
	a.env = append(os.Environ(), "DATABASE_URL="+u.String(), "ARR_DATA_DIR="+dir, "ARR_LOG_LEVEL=warn",
		"ARR_ANSWER_ADDR="+addrs[0], "ARR_GATEWAY_ADDR="+addrs[1], "ARR_RECORDS_ADDR="+addrs[2],
		"ARR_SEARCH=local", "ARR_ANSWER_INDEX_DIR=", "ARR_ANSWER_FETCH_PRIVATE=allow", "ARR_ANSWER_SEED="+seed,
		"ARR_ANSWER_LLM_BASE_URL=", "ARR_ANSWER_LLM_API_KEY=", "ARR_DEMO_DATA=false", "ARR_ANSWER_FEATURES_FILE=")
	if o.features {
		a.env = append(a.env, "ARR_ANSWER_FEATURES_FILE="+filepath.Join(dir, featuresFile))
	}
	up := exec.Command(a.bin, "up")
	up.Env = a.env
	logf, err := os.Create(dir + "/arr-up.log")
	if err != nil {
		return nil, fmt.Errorf("creating the arr log: %w", err)
	}
	cu.add(func() { logf.Close() })
	up.Stdout, up.Stderr = logf, logf
	if err := up.Start(); err != nil {
		return nil, fmt.Errorf("starting arr up: %w", err)
	}
	exited := make(chan struct{})
	go func() { _ = up.Wait(); close(exited) }()
	cu.add(func() { stop(up, exited) })
	if err := a.waitHealthy(ctx, exited, dir+"/arr-up.log"); err != nil {
		return nil, err
	}
	if _, err := a.cli(ctx, "accounts", "create", "--email", "eval@example.com", "--plan", "enterprise", "--json"); err != nil {
		return nil, fmt.Errorf("creating the eval account: %w", err)
	}
	out, err := a.cli(ctx, "keys", "mint", "--email", "eval@example.com", "--service", "answer", "--json")
	if err != nil {
		return nil, fmt.Errorf("minting an answer key: %w", err)
	}
	var key struct{ Secret string }
	if err := json.Unmarshal(out, &key); err != nil || key.Secret == "" {
		return nil, fmt.Errorf("reading the minted key: %v", err)
	}
	a.key = key.Secret
	return a, nil
}

// stop interrupts the process by its PID and waits until it exited
// (closes exited), killing it after 30 seconds.
func stop(cmd *exec.Cmd, exited <-chan struct{}) {
	_ = cmd.Process.Signal(os.Interrupt)
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
	}
}

func (a *arr) waitHealthy(ctx context.Context, exited <-chan struct{}, logPath string) error {
	deadline := time.Now().Add(120 * time.Second)
	for time.Now().Before(deadline) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, a.base+"/healthz", nil)
		if resp, err := a.client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-exited:
			deadline = time.Time{}
		case <-time.After(200 * time.Millisecond):
		}
	}
	tail, _ := os.ReadFile(logPath)
	if len(tail) > 2000 {
		tail = tail[len(tail)-2000:]
	}
	return fmt.Errorf("arr up exited or did not become healthy in 120s; its log ends:\n%s", tail)
}

// cli runs an arr subcommand with the eval environment and returns its
// standard output; a failure carries its standard error.
func (a *arr) cli(ctx context.Context, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, a.bin, args...)
	cmd.Env = a.env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("arr %s: %w: %s", args[0], err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// indexReport is what indexing the page list did.
type indexReport struct {
	Pages     int               `json:"pages"`
	Indexed   int               `json:"indexed"`
	Documents int               `json:"documents"`
	Seconds   float64           `json:"seconds"`
	Aborted   []string          `json:"aborted_batches,omitempty"` // errors of batches that failed as a whole
	Failed    map[string]string `json:"failed,omitempty"`          // page -> error when added alone
}

// index adds the pages' URLs in batches; a batch that fails is reported
// and its URLs are added one at a time, so one bad URL costs only itself.
func (a *arr) index(ctx context.Context, c *corpus, pages []string, batch int) (indexReport, error) {
	start := time.Now()
	r := indexReport{Pages: len(pages), Failed: map[string]string{}}
	for i := 0; i < len(pages); i += batch {
		part := pages[i:min(i+batch, len(pages))]
		urls := make([]string, len(part))
		for j, p := range part {
			urls[j] = c.url(p)
		}
		if _, err := a.cli(ctx, append([]string{"answer", "index", "add", "--json"}, urls...)...); err == nil {
			r.Indexed += len(part)
			continue
		} else if ctx.Err() != nil {
			return r, fmt.Errorf("indexing: %w", ctx.Err())
		} else {
			r.Aborted = append(r.Aborted, fmt.Sprintf("pages %d-%d: %v", i+1, i+len(part), err))
		}
		for j, u := range urls {
			if _, err := a.cli(ctx, "answer", "index", "add", "--json", u); err != nil {
				if ctx.Err() != nil {
					return r, fmt.Errorf("indexing: %w", ctx.Err())
				}
				r.Failed[part[j]] = err.Error()
				continue
			}
			r.Indexed++
		}
	}
	out, err := a.cli(ctx, "answer", "index", "count")
	if err != nil {
		return r, fmt.Errorf("counting the index: %w", err)
	}
	fmt.Sscan(string(out), &r.Documents)
	r.Seconds = time.Since(start).Seconds()
	return r, nil
}

// waitSeeded waits (at most 2 minutes) until the answer service has
// seeded its local index with arr's documentation: the document count is
// above zero and has not changed for 3 seconds.
func (a *arr) waitSeeded(ctx context.Context, pages int) (indexReport, error) {
	start := time.Now()
	last, stable := -1, 0
	for i := 0; i < 120; i++ {
		out, err := a.cli(ctx, "answer", "index", "count")
		if err != nil {
			return indexReport{}, fmt.Errorf("counting the index: %w", err)
		}
		var n int
		fmt.Sscan(string(out), &n)
		if n > 0 && n == last {
			stable++
		} else {
			stable = 0
		}
		last = n
		if stable >= 3 {
			return indexReport{Pages: pages, Indexed: pages, Documents: n, Seconds: time.Since(start).Seconds()}, nil
		}
		select {
		case <-ctx.Done():
			return indexReport{}, ctx.Err()
		case <-time.After(time.Second):
		}
	}
	return indexReport{}, fmt.Errorf("the seeded index did not settle in 2 minutes (%d documents)", last)
}

// reply is the answer service's body, as far as the eval reads it.
type reply struct {
	Answer    string   `json:"answer"`
	Sources   []source `json:"sources"`
	Cached    bool     `json:"cached"`
	Synthesis string   `json:"synthesis"`
	AnswerID  string   `json:"answer_id"`
	// AnswerFound false: the service found no passage that answers and
	// says so (absent: true, as before the field).
	AnswerFound *bool `json:"answer_found"`
}

type source struct {
	Title   string `json:"title"`
	URL     string `json:"url"`
	Content string `json:"content"`
}

// ask sends GET /api/v1/answer?q= once and returns the reply, the HTTP
// status and the wall clock of the call.
func (a *arr) ask(ctx context.Context, q string) (reply, int, time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.base+"/api/v1/answer?q="+url.QueryEscape(q), nil)
	if err != nil {
		return reply{}, 0, 0, fmt.Errorf("building the request: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+a.key)
	t := time.Now()
	resp, err := a.client.Do(req)
	if err != nil {
		return reply{}, 0, time.Since(t), fmt.Errorf("asking: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	took := time.Since(t)
	if err != nil {
		return reply{}, resp.StatusCode, took, fmt.Errorf("reading the answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return reply{}, resp.StatusCode, took, fmt.Errorf("status %d: %s", resp.StatusCode, bytes.TrimSpace(b))
	}
	var r reply
	if err := json.Unmarshal(b, &r); err != nil {
		return reply{}, resp.StatusCode, took, fmt.Errorf("decoding the answer: %w", err)
	}
	return r, resp.StatusCode, took, nil
}

// costs are the stage durations of one synthesis, from its
// AnswerSynthesized event.
type costs struct {
	SearchUS    int64 `json:"search_us"`
	FetchUS     int64 `json:"fetch_us"`
	ExtractUS   int64 `json:"extract_us"`
	RankUS      int64 `json:"rank_us"`
	SynthesisUS int64 `json:"synthesis_us"`
	TotalUS     int64 `json:"total_us"`
}

// stageCosts reads every AnswerSynthesized event with `arr events tail
// --json` and returns their costs by answer id.
func (a *arr) stageCosts(ctx context.Context) (map[string]costs, error) {
	out, err := a.cli(ctx, "events", "tail", "--from", "0", "--follow=false", "--json")
	if err != nil {
		return nil, fmt.Errorf("reading the events: %w", err)
	}
	m := map[string]costs{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for sc.Scan() {
		var e struct {
			Type string          `json:"type"`
			Data json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Type != "AnswerSynthesized" {
			continue
		}
		var d struct {
			AnswerID string `json:"answer_id"`
			Costs    costs  `json:"costs"`
		}
		if err := json.Unmarshal(e.Data, &d); err == nil {
			m[d.AnswerID] = d.Costs
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading the events: %w", err)
	}
	return m, nil
}

// redact drops the password of a database URL for messages.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable database URL)"
	}
	return u.Redacted()
}
