package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/eventstore/postgres"
)

// snapshot captures every read-model table as canonical JSON.
func snapshot(t testing.TB, pool *pgxpool.Pool) map[string]string {
	t.Helper()
	tables := map[string]string{
		"rm_identity.accounts":          "account_id",
		"rm_identity.api_keys":          "key_id",
		"rm_logstats.event_types":       "event_type",
		"rm_logstats.stream_categories": "category",
		"rm_identity.sessions":          "session_id",
		"rm_usage.usage_daily":          "account_id, t.day, t.service, t.key_id",
	}
	out := map[string]string{}
	for table, key := range tables {
		var js *string
		if err := pool.QueryRow(context.Background(), fmt.Sprintf(`SELECT json_agg(t ORDER BY t.%s)::text FROM %s t`, key, table)).Scan(&js); err != nil {
			t.Fatalf("snapshot of %s: %v", table, err)
		}
		if js != nil {
			out[table] = *js
		}
	}
	return out
}

func openStore(t testing.TB, url string) (*pgxpool.Pool, eventstore.Store) {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	st, err := postgres.New(pool, postgres.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return pool, st
}

// writeTraffic creates accounts, mints and revokes keys from several
// goroutines until stop is closed.
func writeTraffic(t testing.TB, st eventstore.Store, stop <-chan struct{}, writers int) *sync.WaitGroup {
	t.Helper()
	cmds, err := commands.New(commands.Config{Store: st, Clock: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			for {
				select {
				case <-stop:
					return
				default:
				}
				email := fmt.Sprintf("u-%s@example.com", uuid.NewString()[:12])
				acc, err := cmds.CreateAccount.Handle(ctx, commands.CreateAccount{Email: email})
				if err != nil {
					t.Errorf("create account: %v", err)
					return
				}
				for _, svc := range account.Services() {
					k, err := cmds.IssueKey.Handle(ctx, commands.IssueKey{AccountID: acc.AccountID, Service: svc})
					if err != nil {
						t.Errorf("issue key: %v", err)
						return
					}
					if rand.IntN(2) == 0 {
						if _, err := cmds.RevokeKey.Handle(ctx, commands.RevokeKey{AccountID: acc.AccountID, KeyID: k.KeyID}); err != nil {
							t.Errorf("revoke key: %v", err)
							return
						}
					}
				}
			}
		}()
	}
	return &wg
}

func waitCaughtUp(t testing.TB, pool *pgxpool.Pool, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		var behind int
		err := pool.QueryRow(context.Background(), `SELECT count(*) FROM projection_checkpoints c, event_log_head h WHERE c.position < h.position AND c.name NOT LIKE 'fanout:%'`).Scan(&behind)
		if err == nil && behind == 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	var lag string
	_ = pool.QueryRow(context.Background(), `SELECT coalesce(string_agg(c.name || ' at ' || c.position || ' of ' || h.position, ', ' ORDER BY c.name), '')
		FROM projection_checkpoints c, event_log_head h WHERE c.position < h.position AND c.name NOT LIKE 'fanout:%'`).Scan(&lag)
	t.Fatalf("projections did not catch up within %s: behind: %s", timeout, lag)
}

// TestProjectionSurvivesSIGKILL kills the projection process mid-batch over
// and over while events flow; the read models must end up equal to a fresh
// rebuild (nothing lost, nothing counted twice).
func TestProjectionSurvivesSIGKILL(t *testing.T) {
	e := newEnv(t)
	e.createAccount("seed@example.com", "free") // sets the read models up
	pool, st := openStore(t, e.dbURL)
	stop := make(chan struct{})
	wg := writeTraffic(t, st, stop, 4)

	e.extraEnv = append(e.extraEnv, "ARR_PROJECTION_BATCH_SIZE=25")
	kills, advancedDuringKills := 0, 0
	for i := 0; i < 22; i++ {
		var before int64
		_ = pool.QueryRow(context.Background(), `SELECT sum(position) FROM projection_checkpoints`).Scan(&before)
		p := e.start("serve", "projections")
		// Kill it while it works: once it has applied a batch (its start
		// takes a varying time on a busy machine), at a random point of
		// the batches that follow.
		var after int64
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			_ = pool.QueryRow(context.Background(), `SELECT sum(position) FROM projection_checkpoints`).Scan(&after)
			if after > before {
				break
			}
		}
		time.Sleep(time.Duration(rand.IntN(150)) * time.Millisecond)
		p.kill()
		kills++
		_ = pool.QueryRow(context.Background(), `SELECT sum(position) FROM projection_checkpoints`).Scan(&after)
		if after > before {
			advancedDuringKills++
		}
	}
	close(stop)
	wg.Wait()
	if advancedDuringKills < kills/2 {
		t.Fatalf("projections advanced in only %d of %d runs: the kills did not hit a working process", advancedDuringKills, kills)
	}
	p := e.start("serve", "projections")
	waitCaughtUp(t, pool, 60*time.Second)
	p.stop(t)

	var head, counted int64
	if err := pool.QueryRow(context.Background(), `SELECT (SELECT position FROM event_log_head), (SELECT sum(events) FROM rm_logstats.event_types)`).Scan(&head, &counted); err != nil {
		t.Fatal(err)
	}
	if counted != head {
		t.Fatalf("logstats counted %d events, the log holds %d", counted, head)
	}
	live := snapshot(t, pool)
	e.mustArr(nil, "projections", "rebuild", "all")
	rebuilt := snapshot(t, pool)
	for table, want := range rebuilt {
		if live[table] != want {
			t.Errorf("%s after %d SIGKILLs differs from a fresh rebuild", table, kills)
		}
	}
	t.Logf("%d SIGKILLs, %d events, read models equal to a fresh rebuild", kills, head)
}

// TestRebuildWhileServing rebuilds the read models repeatedly while clients
// authenticate against all three services: no request may fail.
func TestRebuildWhileServing(t *testing.T) {
	e := newEnv(t)
	e.up()
	// Enterprise: the clients below loop as fast as they can, far past the
	// Free daily quotas.
	e.createAccount("reader@example.com", "enterprise")
	keys := map[string]mintedKey{}
	for _, svc := range []string{"answer", "gateway", "records"} {
		keys[svc] = e.mint("reader@example.com", svc)
	}
	// Enough history that a rebuild takes a while.
	_, st := openStore(t, e.dbURL)
	stop := make(chan struct{})
	wg := writeTraffic(t, st, stop, 2)
	time.Sleep(2 * time.Second)
	close(stop)
	wg.Wait()
	filler := make([]eventstore.NewEvent, 50000)
	for i := range filler {
		data, _ := json.Marshal(map[string]int{"n": i})
		filler[i] = eventstore.NewEvent{ID: uuid.New(), Type: "LoadGenerated", SchemaVersion: 1, Data: data}
	}
	if _, err := st.AppendBulk(context.Background(), []eventstore.Append{{StreamID: "load-1", Expected: eventstore.NoStream(), Events: filler}}); err != nil {
		t.Fatal(err)
	}

	var ok, failed atomic.Int64
	done := make(chan struct{})
	var clients sync.WaitGroup
	paths := map[string]string{"answer": "/api/v1/key", "gateway": "/v1/key", "records": "/api/v1/key"}
	for svc, k := range keys {
		for c := 0; c < 2; c++ {
			clients.Add(1)
			go func(svc string, k mintedKey) {
				defer clients.Done()
				for {
					select {
					case <-done:
						return
					default:
					}
					code, body := get(t, e.base(svc)+paths[svc], map[string]string{"Authorization": "Bearer " + k.Secret})
					if code == 200 {
						ok.Add(1)
					} else {
						failed.Add(1)
						t.Errorf("%s during rebuild: %d %s", svc, code, body)
					}
				}
			}(svc, k)
		}
	}
	for i := 0; i < 3; i++ {
		e.mustArr(nil, "projections", "rebuild", "identity")
		e.mustArr(nil, "projections", "rebuild", "logstats")
	}
	close(done)
	clients.Wait()
	if ok.Load() < 100 {
		t.Fatalf("only %d requests completed during the rebuilds", ok.Load())
	}
	if failed.Load() > 0 {
		t.Fatalf("%d of %d requests failed during rebuilds", failed.Load(), ok.Load()+failed.Load())
	}
	t.Logf("%d requests served during 6 rebuilds, none failed", ok.Load())
}
