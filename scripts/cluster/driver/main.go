// Command driver runs the scenarios of scripts/cluster/test.sh from the
// cluster's load-generator host (a network namespace): `driver upstream
// ADDR` serves the OpenAI-compatible stand-in the gateways call; `driver
// run TOPOLOGY.json` sets up accounts and keys, measures the gateway's
// requests a second with 1, 2 and 3 gateway hosts on one database, and
// runs each failure scenario, asserting what must hold and printing the
// time to recover. It ends with "N passed, M failed" and exits 1 when a
// scenario failed. Every address it reaches is one of the cluster's
// (127.77.0.0/24, loopback addresses routed between the namespaces).
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/adapters/upstream/upstreamtest"
)

// Host is one process of the cluster.
type Host struct {
	Name string `json:"name"`
	NS   string `json:"ns"`
	Link string `json:"link"`
	URL  string `json:"url"`
	PID  int    `json:"pid"`
}

// Topology is what test.sh started.
type Topology struct {
	Arr         string   `json:"arr"`
	Env         []string `json:"env"`
	DB          string   `json:"db"`
	NATSURL     string   `json:"nats_url"`
	Gateways    []Host   `json:"gateways"`
	Projections []Host   `json:"projections"`
	NATS        []Host   `json:"nats"`
	Records     Host     `json:"records"`
	ReplicaStop []string `json:"replica_stop"`
}

type result struct {
	name    string
	err     error
	recover time.Duration
	note    string
}

func main() {
	log.SetFlags(log.Ltime)
	if len(os.Args) < 3 {
		log.Fatal("usage: driver upstream ADDR | driver run TOPOLOGY.json")
	}
	switch os.Args[1] {
	case "upstream":
		up, err := upstreamtest.New(os.Args[2])
		if err != nil {
			log.Fatal(err)
		}
		log.Printf("upstream stand-in at %s", up.URL)
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
		<-sig
		up.Close()
	case "run":
		raw, err := os.ReadFile(os.Args[2])
		if err != nil {
			log.Fatal(err)
		}
		var top Topology
		if err := json.Unmarshal(raw, &top); err != nil {
			log.Fatal(err)
		}
		os.Exit(run(top))
	default:
		log.Fatalf("unknown mode %q", os.Args[1])
	}
}

func run(top Topology) int {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, top.DB)
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	c := &cluster{top: top, pool: pool}
	if err := c.setup(ctx); err != nil {
		log.Fatalf("setup: %v", err)
	}
	var results []result
	add := func(r result) {
		results = append(results, r)
		if r.err != nil {
			fmt.Printf("FAIL  %s: %v\n", r.name, r.err)
			return
		}
		fmt.Printf("PASS  %s: recovered in %s%s\n", r.name, r.recover.Round(time.Millisecond), r.note)
	}
	c.throughput(ctx)
	add(c.gatewayKill(ctx))
	add(c.quotaExact(ctx))
	add(c.projectionCut(ctx))
	add(c.natsNodeStop(ctx))
	add(c.replicaStop(ctx))
	failed := 0
	for _, r := range results {
		if r.err != nil {
			failed++
		}
	}
	fmt.Printf("%d passed, %d failed\n", len(results)-failed, failed)
	if failed > 0 {
		return 1
	}
	return 0
}

type cluster struct {
	top  Topology
	pool *pgxpool.Pool
	// keys: an enterprise gateway key (load), a free account's key
	// (quota), a budgeted key, a records key.
	key, freeKey, budgetKey, budgetKeyID, recordsKey string
	list                                             string
}

// arr runs the CLI (from this host, on the primary) and decodes its JSON.
func (c *cluster) arr(v any, args ...string) error {
	cmd := exec.Command(c.top.Arr, args...)
	cmd.Env = append(os.Environ(), c.top.Env...)
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		return fmt.Errorf("arr %s: %v %s", strings.Join(args, " "), err, stderr)
	}
	if v != nil {
		return json.Unmarshal(out, v)
	}
	return nil
}

func (c *cluster) setup(ctx context.Context) error {
	for _, a := range [][]string{{"load@example.com", "enterprise"}, {"free@example.com", "free"}, {"budget@example.com", "enterprise"}, {"records@example.com", "free"}} {
		if err := c.arr(nil, "accounts", "create", "--email", a[0], "--plan", a[1], "--json"); err != nil {
			return err
		}
	}
	var k struct{ ID, Secret string }
	if err := c.arr(&k, "keys", "mint", "--email", "load@example.com", "--service", "gateway", "--json"); err != nil {
		return err
	}
	c.key = k.Secret
	if err := c.arr(&k, "keys", "mint", "--email", "free@example.com", "--service", "gateway", "--json"); err != nil {
		return err
	}
	c.freeKey = k.Secret
	if err := c.arr(&k, "keys", "mint", "--email", "budget@example.com", "--service", "gateway", "--max-budget-usd", "0.01", "--budget-period", "month", "--json"); err != nil {
		return err
	}
	c.budgetKey, c.budgetKeyID = k.Secret, k.ID
	if err := c.arr(&k, "keys", "mint", "--email", "records@example.com", "--service", "records", "--json"); err != nil {
		return err
	}
	c.recordsKey = k.Secret
	for _, h := range append(append([]Host{}, c.top.Gateways...), c.top.Records) {
		if err := waitHealthy(h.URL, 60*time.Second); err != nil {
			return err
		}
	}
	return nil
}
