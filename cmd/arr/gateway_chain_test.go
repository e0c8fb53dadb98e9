package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// TestGatewayAuditChainUnderLoad: 10,000 completions from 64 concurrent
// clients, spread over two gateway processes on one database, form one
// linear chain that `arr audit verify` accepts; changing one stored event
// is caught and its position named.
func TestGatewayAuditChainUnderLoad(t *testing.T) {
	g := newGateway(t, "enterprise")
	// A second gateway process on the same database and event log.
	second := "http://" + freeAddr(t)
	g.extraEnv = append(g.extraEnv, "ARR_GATEWAY_ADDR="+strings.TrimPrefix(second, "http://"))
	p2 := g.start("serve", "gateway")
	waitHealthy(t, second, p2)

	const total, clients = 10000, 64
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}, Timeout: time.Minute}
	var next atomic.Int64
	hashes := make([]string, total)
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	began := time.Now()
	for w := 0; w < clients; w++ {
		base := g.gateway
		if w%2 == 1 {
			base = second
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= total {
					return
				}
				stream := i%10 == 0
				body, _ := json.Marshal(map[string]any{"messages": userMsg("request " + strconv.FormatInt(i, 10)), "stream": stream})
				req, _ := http.NewRequest(http.MethodPost, base+"/v1/chat/completions", bytes.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+g.key)
				resp, err := client.Do(req)
				if err != nil {
					errs <- err
					return
				}
				raw, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					errs <- fmt.Errorf("request %d: %d %s", i, resp.StatusCode, raw)
					return
				}
				if stream {
					hashes[i] = resp.Trailer.Get("X-Arr-Audit-Hash")
					continue
				}
				var out struct {
					Routing struct {
						AuditHash string `json:"audit_hash"`
					} `json:"routing"`
				}
				_ = json.Unmarshal(raw, &out)
				hashes[i] = out.Routing.AuditHash
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	t.Logf("%d completions from %d clients over two gateway processes in %s", total, clients, time.Since(began).Round(time.Millisecond))

	// Every hash handed out is in the chain exactly once, and the chain
	// has no other entries.
	pool, err := pgxpool.New(context.Background(), g.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	inChain := map[string]int64{}
	rows, err := pool.Query(context.Background(), `SELECT data->>'hash', position FROM events WHERE stream_id = 'auditchain' ORDER BY stream_version`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var h string
		var pos int64
		if err := rows.Scan(&h, &pos); err != nil {
			t.Fatal(err)
		}
		inChain[h] = pos
	}
	rows.Close()
	if len(inChain) != total {
		t.Fatalf("the chain has %d distinct entries, want %d", len(inChain), total)
	}
	for i, h := range hashes {
		if _, ok := inChain[h]; !ok {
			t.Fatalf("request %d got audit hash %q, which is not in the chain", i, h)
		}
	}

	var rep struct {
		OK      bool   `json:"ok"`
		Checked uint64 `json:"checked"`
		Broken  *struct {
			Position uint64 `json:"position"`
			Problem  string `json:"problem"`
		} `json:"broken"`
	}
	g.mustArr(&rep, "audit", "verify", "--json")
	if !rep.OK || rep.Checked != total {
		t.Fatalf("verify: %+v", rep)
	}

	// Tamper with one stored event (as a superuser, past the immutability
	// trigger): one completion's token count, in the middle of the chain.
	victim := inChain[hashes[total/2]]
	tamper := func(sql string) {
		t.Helper()
		ctx := context.Background()
		conn, err := pool.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Release()
		if _, err := conn.Exec(ctx, `ALTER TABLE events DISABLE TRIGGER events_no_update`); err != nil {
			t.Fatal(err)
		}
		tag, err := conn.Exec(ctx, sql, victim)
		if err != nil || tag.RowsAffected() != 1 {
			t.Fatalf("%s: %v (%d rows)", sql, err, tag.RowsAffected())
		}
		if _, err := conn.Exec(ctx, `ALTER TABLE events ENABLE TRIGGER events_no_update`); err != nil {
			t.Fatal(err)
		}
	}
	tamper(`UPDATE events SET data = replace(data::text, '"completion_tokens":', '"completion_tokens":1')::json WHERE position = $1`)
	out, _, code := g.arr("audit", "verify")
	if code != 1 || !strings.Contains(out, fmt.Sprintf("BROKEN at log position %d", victim)) {
		t.Fatalf("verify after tampering: exit %d, %s (victim at %d)", code, out, victim)
	}
	// --from past the tampered entry verifies the rest.
	g.mustArr(&rep, "audit", "verify", "--json", "--from", strconv.FormatInt(victim+1, 10))
	if !rep.OK || rep.Checked == 0 || rep.Checked >= total {
		t.Fatalf("verify --from after the victim: %+v", rep)
	}
	// Putting the original bytes back makes the chain verify again.
	tamper(`UPDATE events SET data = replace(data::text, '"completion_tokens":1', '"completion_tokens":')::json WHERE position = $1`)
	g.mustArr(&rep, "audit", "verify", "--json")
	if !rep.OK {
		t.Fatalf("restoring the entry does not verify: %+v", rep)
	}
}
