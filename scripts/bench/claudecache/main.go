// Command claudecache measures what a Claude Code session through arr
// pays for its prompt: real Claude Code (`claude -p`, then `claude -p
// --continue` for every later turn, each a short prompt) in a network
// namespace with loopback alone, relayed to `arr up` on a fresh database,
// whose catalog's Claude models speak Anthropic's Messages API to the
// loopback stand-in (upstreamtest), which counts prompt-cache reads and
// writes per cache_control prefix as Anthropic does. arr passes Claude
// Code's requests through with their cache_control breakpoints; the
// bench then reads arr's own records of the calls (its audit entries)
// and prints, per turn, the prompt tokens, cache reads and writes, output
// tokens and the cost arr charged, and a summary beside what the same
// tokens would cost at the plain input price. It asserts nothing.
//
// Run it through scripts/bench/claude-cache.sh, which builds arr and
// installs Claude Code. It needs root (unshare(CLONE_NEWNET)).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/arr-dev/arr/adapters/upstream/upstreamtest"
)

func main() {
	var (
		dbURL   = flag.String("database-url", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", "PostgreSQL server; a fresh database is created on it and dropped after")
		arrBin  = flag.String("arr", "", "the arr binary")
		claude  = flag.String("claude", "", "Claude Code's claude executable")
		turns   = flag.Int("turns", 8, "turns of the session: claude -p, then claude -p --continue")
		jsonOut = flag.String("json", "", "also write the per-call records and the summary as JSON here")
	)
	flag.Parse()
	if *arrBin == "" || *claude == "" {
		log.Fatal("-arr and -claude are required")
	}
	if *turns < 1 || *turns > 50 {
		log.Fatal("-turns must be from 1 to 50")
	}
	if err := run(context.Background(), *dbURL, *arrBin, *claude, *turns, *jsonOut); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, dbURL, arrBin, claude string, turns int, jsonOut string) error {
	up, err := upstreamtest.New("127.0.0.1:0")
	if err != nil {
		return err
	}
	defer up.Close()
	tmp, err := os.MkdirTemp("", "arr-claude-cache-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	catalog := filepath.Join(tmp, "catalog.json")
	if err := writeCatalog(catalog, up.URL); err != nil {
		return err
	}
	db, drop, err := freshDatabase(ctx, dbURL)
	if err != nil {
		return err
	}
	defer drop()
	a, err := startArr(arrBin, db, catalog, tmp)
	if err != nil {
		return err
	}
	defer a.stop()
	ns, err := newLoopbackNS(a.addr)
	if err != nil {
		return fmt.Errorf("a loopback-only network namespace for Claude Code (needs root): %w", err)
	}
	defer ns.close()
	calls := func() (n int) {
		for _, m := range benchModels {
			n += up.Calls(m.Upstream)
		}
		return n
	}
	session, err := runSession(ctx, ns, claude, a.key, tmp, turns, calls)
	if err != nil {
		return err
	}
	recs, err := auditRecords(ctx, db, calls())
	if err != nil {
		return err
	}
	sum := report(os.Stdout, session, recs)
	usage(os.Stdout, a)
	if jsonOut != "" {
		b, _ := json.MarshalIndent(map[string]any{"turns": session, "calls": recs, "summary": sum}, "", "  ")
		return os.WriteFile(jsonOut, b, 0o644)
	}
	return nil
}
