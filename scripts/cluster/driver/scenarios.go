package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/nats-io/nats.go"

	"github.com/arr-dev/arr/eventstore/fanout"
)

// throughput prints the gateway's requests a second at 64 clients with 1,
// 2 and 3 gateway hosts on the one database (the median of 3 runs each).
func (c *cluster) throughput(ctx context.Context) {
	gws := urls(c.top.Gateways)
	var rates []float64
	for k := 1; k <= len(gws); k++ {
		var runs []float64
		for range 3 {
			runs = append(runs, load(ctx, gws[:k], c.key, 64, 8*time.Second).rate())
		}
		rates = append(rates, median(runs))
	}
	fmt.Printf("gateway at 64 clients, one database: ")
	for i, r := range rates {
		fmt.Printf("%d host(s) %.0f req/s (x%.2f)  ", i+1, r, r/rates[0])
	}
	fmt.Println()
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s[len(s)/2]
}

// gatewayKill: kill -9 one gateway host under load; the others keep
// answering, and every answered completion is in the audit chain.
func (c *cluster) gatewayKill(ctx context.Context) result {
	r := result{name: "kill -9 a gateway host under load"}
	victim := c.top.Gateways[0]
	var res loadResult
	done := make(chan struct{})
	go func() { res = load(ctx, urls(c.top.Gateways), c.key, 32, 12*time.Second); close(done) }()
	time.Sleep(4 * time.Second)
	killed := time.Now()
	if err := syscall.Kill(victim.PID, syscall.SIGKILL); err != nil {
		r.err = fmt.Errorf("killing %s: %w", victim.Name, err)
		return r
	}
	<-done
	c.top.Gateways = c.top.Gateways[1:]
	after := 0
	for _, t := range res.okAt {
		if t.After(killed.Add(time.Second)) {
			after++
		}
	}
	if after == 0 {
		r.err = errors.New("no completion answered after the kill")
		return r
	}
	chain := map[string]bool{}
	rows, err := c.pool.Query(ctx, `SELECT data->>'hash' FROM events WHERE stream_id = 'auditchain'`)
	if err != nil {
		r.err = err
		return r
	}
	for rows.Next() {
		var h string
		_ = rows.Scan(&h)
		chain[h] = true
	}
	rows.Close()
	for _, h := range res.hashes {
		if !chain[h] {
			r.err = fmt.Errorf("completion %s was answered but is not in the audit chain", h)
			return r
		}
	}
	var v struct {
		OK bool `json:"ok"`
	}
	if err := c.arr(&v, "audit", "verify", "--json"); err != nil || !v.OK {
		r.err = fmt.Errorf("arr audit verify: ok=%v %v", v.OK, err)
		return r
	}
	r.recover = res.gap(killed)
	r.note = fmt.Sprintf(" (the longest gap between answers after the kill; %d answered, %d after it, %d failed in flight; all %d answered in the chain)",
		res.ok, after, res.failed, len(res.hashes))
	return r
}

// budget is the budgeted key's, in micro-USD ($0.01).
const budget = 10_000

// quotaExact: a free key's daily quota (100) and a key's budget hold
// across the gateway hosts under 300 concurrent requests.
func (c *cluster) quotaExact(ctx context.Context) result {
	r := result{name: "quotas and budgets exact across gateway hosts"}
	got := burst(ctx, urls(c.top.Gateways), c.freeKey, 300, helloBody)
	if got[200] != 100 {
		r.err = fmt.Errorf("a free key's 300 concurrent requests got %v; want exactly 100 200s", got)
		return r
	}
	// Bursts of 300 on the budgeted key until it refuses some: what it
	// spent never passes the budget.
	b := map[int]int{}
	for i := 0; i < 20 && b[429] == 0; i++ {
		for s, n := range burst(ctx, urls(c.top.Gateways), c.budgetKey, 300, shortBody) {
			b[s] += n
		}
	}
	var used, reserved int64
	if err := c.pool.QueryRow(ctx, `SELECT coalesce(sum(used), 0), coalesce(sum(reserved), 0) FROM spend_counters WHERE bucket = $1`,
		"key:"+c.budgetKeyID+":budget:month").Scan(&used, &reserved); err != nil {
		r.err = err
		return r
	}
	if used > budget || reserved != 0 || b[200] == 0 || b[429] == 0 {
		r.err = fmt.Errorf("a $%.4f budget: statuses %v, spent %d µ$ (reserved %d); a refusal: %v", float64(budget)/1e6, b, used, reserved, lastRefusal.Load())
		return r
	}
	r.note = fmt.Sprintf(" (free key: %v; a $%.4f budget: %v, spent %d µ$)", got, float64(budget)/1e6, b, used)
	return r
}

// leaseHolders maps a projection process's pid to the leases it holds.
func (c *cluster) leaseHolders(ctx context.Context) (map[int]int, error) {
	rows, err := c.pool.Query(ctx, `SELECT a.application_name, count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
		WHERE l.locktype = 'advisory' AND l.granted AND a.application_name LIKE 'arr projection leases %' GROUP BY 1`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int]int{}
	for rows.Next() {
		var app string
		var n int
		if err := rows.Scan(&app, &n); err != nil {
			return nil, err
		}
		pid, _ := strconv.Atoi(app[strings.LastIndex(app, ":")+1:])
		out[pid] = n
	}
	return out, rows.Err()
}

// projectionCut: cut the projection host holding the leases off the
// network; the other takes them over; after it returns, no event was
// applied twice (the read models equal a rebuild).
func (c *cluster) projectionCut(ctx context.Context) result {
	r := result{name: "cut a projection host off the network"}
	var want int
	if err := c.pool.QueryRow(ctx, `SELECT count(*) FROM projection_checkpoints WHERE name NOT LIKE 'fanout:%'`).Scan(&want); err != nil {
		r.err = err
		return r
	}
	var holder, other *Host
	for deadline := time.Now().Add(60 * time.Second); holder == nil; time.Sleep(200 * time.Millisecond) {
		hs, err := c.leaseHolders(ctx)
		if err != nil {
			r.err = err
			return r
		}
		for i := range c.top.Projections {
			if hs[c.top.Projections[i].PID] == want {
				holder, other = &c.top.Projections[i], &c.top.Projections[1-i]
			}
		}
		if time.Now().After(deadline) {
			r.err = fmt.Errorf("no projection host holds all %d leases: %v", want, hs)
			return r
		}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
				load(ctx, urls(c.top.Gateways), c.key, 4, time.Second)
			}
		}
	}()
	cut := time.Now()
	if out, err := exec.Command("ip", "-n", holder.NS, "link", "set", holder.Link, "down").CombinedOutput(); err != nil {
		r.err = fmt.Errorf("ip link down: %v %s", err, out)
		return r
	}
	for {
		hs, err := c.leaseHolders(ctx)
		if err == nil && hs[other.PID] == want {
			r.recover = time.Since(cut)
			break
		}
		if time.Since(cut) > 60*time.Second {
			r.err = fmt.Errorf("%s did not take the leases within 60 s: %v", other.Name, hs)
			close(stop)
			wg.Wait()
			return r
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(3 * time.Second)
	if out, err := exec.Command("ip", "-n", holder.NS, "link", "set", holder.Link, "up").CombinedOutput(); err != nil {
		r.err = fmt.Errorf("ip link up: %v %s", err, out)
	}
	time.Sleep(5 * time.Second)
	close(stop)
	wg.Wait()
	if r.err != nil {
		return r
	}
	if err := c.caughtUp(ctx); err != nil {
		r.err = err
		return r
	}
	live, err := c.checksums(ctx)
	if err != nil {
		r.err = err
		return r
	}
	if err := c.arr(nil, "projections", "rebuild", "all"); err != nil {
		r.err = err
		return r
	}
	rebuilt, err := c.checksums(ctx)
	if err != nil {
		r.err = err
		return r
	}
	for table, sum := range rebuilt {
		if live[table] != sum {
			r.err = fmt.Errorf("%s differs from a rebuild after the cut", table)
			return r
		}
	}
	r.note = fmt.Sprintf(" (%s's %d leases taken by %s; after it returned, %d read-model tables equal a rebuild)", holder.Name, want, other.Name, len(live))
	return r
}

func (c *cluster) caughtUp(ctx context.Context) error {
	for deadline := time.Now().Add(120 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		var behind int
		err := c.pool.QueryRow(ctx, `SELECT count(*) FROM projection_checkpoints c, event_log_head h WHERE c.position < h.position AND c.name NOT LIKE 'fanout:%'`).Scan(&behind)
		if err == nil && behind == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("projections not caught up after 120 s (%d behind, %v)", behind, err)
		}
	}
}

// checksums is an md5 of every read-model table's rows.
func (c *cluster) checksums(ctx context.Context) (map[string]string, error) {
	rows, err := c.pool.Query(ctx, `SELECT table_schema || '.' || table_name FROM information_schema.tables
		WHERE table_schema LIKE 'rm\_%' AND table_type = 'BASE TABLE' ORDER BY 1`)
	if err != nil {
		return nil, err
	}
	var tables []string
	for rows.Next() {
		var t string
		_ = rows.Scan(&t)
		tables = append(tables, t)
	}
	rows.Close()
	out := map[string]string{}
	for _, t := range tables {
		var sum string
		if err := c.pool.QueryRow(ctx, `SELECT md5(coalesce(string_agg(x::text, E'\n' ORDER BY x::text), '')) FROM `+t+` x`).Scan(&sum); err != nil {
			return nil, fmt.Errorf("%s: %w", t, err)
		}
		out[t] = sum
	}
	return out, nil
}

// subscription collects the bus's messages from a durable consumer.
type subscription struct {
	mu    sync.Mutex
	first map[uint64]int // position -> index of first receipt
	order []uint64
	last  time.Time
	close func() error
}

func (c *cluster) subscribe(ctx context.Context) (*subscription, error) {
	sub, closeSub, err := fanout.NewDurableSubscriber(fanout.BusNATS, c.top.NATSURL, "cluster-driver", nil)
	if err != nil {
		return nil, err
	}
	ch, err := sub.Subscribe(ctx, fanout.DefaultTopic)
	if err != nil {
		return nil, err
	}
	s := &subscription{first: map[uint64]int{}, close: closeSub}
	go func() {
		for m := range ch {
			s.take(m)
		}
	}()
	return s, nil
}

func (s *subscription) take(m *message.Message) {
	pos, _ := strconv.ParseUint(m.Metadata.Get(fanout.MetaPosition), 10, 64)
	s.mu.Lock()
	if _, seen := s.first[pos]; !seen {
		s.first[pos] = len(s.order)
		s.order = append(s.order, pos)
	}
	s.last = time.Now()
	s.mu.Unlock()
	m.Ack()
}

// natsNodeStop: kill -9 the NATS node leading the fan-out's stream while
// events flow; the consumer sees every event, in order after dedup.
func (c *cluster) natsNodeStop(ctx context.Context) result {
	r := result{name: "stop a NATS node (the stream's leader)"}
	sub, err := c.subscribe(ctx)
	if err != nil {
		r.err = err
		return r
	}
	defer sub.close()
	nc, err := nats.Connect(c.top.NATSURL)
	if err != nil {
		r.err = err
		return r
	}
	js, _ := nc.JetStream()
	info, err := js.StreamInfo(fanout.StreamName(fanout.DefaultTopic))
	nc.Close()
	if err != nil || info.Cluster == nil {
		r.err = fmt.Errorf("stream info: %v", err)
		return r
	}
	var leader *Host
	for i := range c.top.NATS {
		if c.top.NATS[i].Name == info.Cluster.Leader {
			leader = &c.top.NATS[i]
		}
	}
	if leader == nil || info.Config.Replicas != 3 {
		r.err = fmt.Errorf("stream %s: leader %q, replicas %d", info.Config.Name, info.Cluster.Leader, info.Config.Replicas)
		return r
	}
	done := make(chan struct{})
	go func() { load(ctx, urls(c.top.Gateways), c.key, 8, 10*time.Second); close(done) }()
	time.Sleep(3 * time.Second)
	var before uint64
	_ = c.pool.QueryRow(ctx, `SELECT position FROM event_log_head`).Scan(&before)
	killed := time.Now()
	if err := syscall.Kill(leader.PID, syscall.SIGKILL); err != nil {
		r.err = err
		return r
	}
	<-done
	var head uint64
	_ = c.pool.QueryRow(ctx, `SELECT position FROM event_log_head`).Scan(&head)
	var resumed time.Duration
	for deadline := time.Now().Add(120 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		sub.mu.Lock()
		n := len(sub.order)
		_, past := sub.first[before+1]
		sub.mu.Unlock()
		if past && resumed == 0 {
			resumed = time.Since(killed)
		}
		if n >= int(head) {
			break
		}
		if time.Now().After(deadline) {
			r.err = fmt.Errorf("the consumer has %d distinct events of %d after 120 s", n, head)
			return r
		}
	}
	sub.mu.Lock()
	defer sub.mu.Unlock()
	for i, p := range sub.order[:head] {
		if p != uint64(i+1) {
			r.err = fmt.Errorf("the %dth distinct event received is at position %d: out of order or missing", i+1, p)
			return r
		}
	}
	r.recover = resumed
	r.note = fmt.Sprintf(" (killed %s, the leader; every one of %d events received once in order after dedup; recovery = time until the events after the kill flowed)", leader.Name, head)
	return r
}

// replicaStop: stop the records host's read replica; it falls back to
// the primary (or answers 503), never with a stale answer.
func (c *cluster) replicaStop(ctx context.Context) result {
	r := result{name: "stop the read replica"}
	f := filepath.Join(os.TempDir(), "arr-cluster-list.csv")
	if err := os.WriteFile(f, []byte("apn,county,address\n0001-003,24510,2041 W NORTH AVE\n"), 0o600); err != nil {
		r.err = err
		return r
	}
	defer os.Remove(f)
	var l struct {
		ListID string `json:"list_id"`
	}
	if err := c.arr(&l, "import", "list", "--email", "records@example.com", f, "--json"); err != nil {
		r.err = err
		return r
	}
	if out, err := exec.Command(c.top.ReplicaStop[0], c.top.ReplicaStop[1:]...).CombinedOutput(); err != nil {
		r.err = fmt.Errorf("stopping the replica: %v %s", err, out)
		return r
	}
	stopped := time.Now()
	statuses := map[int]int{}
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.top.Records.URL+"/api/v1/lists", nil)
		req.Header.Set("X-API-Key", c.recordsKey)
		resp, err := client.Do(req)
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			statuses[resp.StatusCode]++
			if resp.StatusCode == 200 {
				if !strings.Contains(string(body), l.ListID) {
					// Stale beyond the bound only if the replica had lagged
					// by more than ARR_READ_MAX_LAG: the list was imported
					// just now, so a missing one is a stale read.
					if time.Since(stopped) > 15*time.Second {
						r.err = fmt.Errorf("a stale answer %s after the replica stopped: %s", time.Since(stopped), body)
						return r
					}
					continue
				}
				r.recover = time.Since(stopped)
				break
			}
		}
		if time.Since(stopped) > 60*time.Second {
			r.err = fmt.Errorf("no answer from the primary within 60 s: %v", statuses)
			return r
		}
		time.Sleep(100 * time.Millisecond)
	}
	var h struct {
		ReadReplica *struct {
			Status string `json:"status"`
			Reads  string `json:"reads"`
		} `json:"read_replica"`
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		resp, err := client.Get(c.top.Records.URL + "/healthz")
		if err == nil {
			_ = json.NewDecoder(resp.Body).Decode(&h)
			resp.Body.Close()
		}
		if h.ReadReplica != nil && h.ReadReplica.Status == "down" && h.ReadReplica.Reads == "primary" {
			break
		}
		if time.Now().After(deadline) {
			r.err = fmt.Errorf("/healthz does not report the replica down: %+v", h.ReadReplica)
			return r
		}
	}
	r.note = fmt.Sprintf(" (the list imported just before is read from the primary; answers meanwhile %v; /healthz: replica down, reads primary)", statuses)
	return r
}
