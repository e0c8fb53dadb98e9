package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// TestGatewayCrashLosesNoAnsweredCompletion: `arr up` is killed (SIGKILL)
// while 32 clients send completions; every completion a client got an
// answer for is in the audit chain, the chain verifies, and after a
// restart it goes on from its head.
func TestGatewayCrashLosesNoAnsweredCompletion(t *testing.T) {
	g := newGateway(t, "enterprise")
	client := &http.Client{Timeout: 20 * time.Second}
	var mu sync.Mutex
	var answered []string
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 32; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body, _ := json.Marshal(map[string]any{"messages": userMsg("Say hello")})
			for {
				select {
				case <-stop:
					return
				default:
				}
				req, _ := http.NewRequest(http.MethodPost, g.gateway+"/v1/chat/completions", bytes.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+g.key)
				resp, err := client.Do(req)
				if err != nil {
					time.Sleep(10 * time.Millisecond)
					continue
				}
				raw, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				var out struct {
					Routing struct {
						AuditHash string `json:"audit_hash"`
					} `json:"routing"`
				}
				if resp.StatusCode == http.StatusOK && json.Unmarshal(raw, &out) == nil {
					mu.Lock()
					answered = append(answered, out.Routing.AuditHash)
					mu.Unlock()
				}
			}
		}()
	}
	time.Sleep(1500 * time.Millisecond)
	g.proc.kill()
	time.Sleep(200 * time.Millisecond)
	close(stop)
	wg.Wait()
	if len(answered) < 100 {
		t.Fatalf("only %d completions answered before the kill", len(answered))
	}

	pool, err := pgxpool.New(context.Background(), g.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	inChain := func() map[string]bool {
		rows, err := pool.Query(context.Background(), `SELECT data->>'hash' FROM events WHERE stream_id = 'auditchain'`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		m := map[string]bool{}
		for rows.Next() {
			var h string
			_ = rows.Scan(&h)
			m[h] = true
		}
		return m
	}
	chain := inChain()
	for _, h := range answered {
		if !chain[h] {
			t.Fatalf("completion %s was answered but is not in the chain after the crash", h)
		}
	}
	var rep struct {
		OK      bool   `json:"ok"`
		Checked uint64 `json:"checked"`
	}
	g.mustArr(&rep, "audit", "verify", "--json")
	if !rep.OK || rep.Checked != uint64(len(chain)) {
		t.Fatalf("verify after the crash: %+v (chain %d)", rep, len(chain))
	}
	t.Logf("%d completions answered before SIGKILL, %d in the chain (the rest were committed but their replies lost with the process)", len(answered), len(chain))

	// Restart: the chain goes on from its head.
	g.proc = g.start("up")
	waitHealthy(t, g.gateway, g.proc)
	for i := 0; i < 5; i++ {
		if code, _, out := g.chat(t, map[string]any{"messages": userMsg("after the crash")}); code != 200 {
			t.Fatalf("after restart: %d %v", code, out)
		}
	}
	g.mustArr(&rep, "audit", "verify", "--json")
	if !rep.OK || rep.Checked != uint64(len(chain))+5 {
		t.Fatalf("verify after the restart: %+v", rep)
	}
}
