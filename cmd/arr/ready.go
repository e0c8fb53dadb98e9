package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/arr-dev/arr/domain/wait"
	"github.com/arr-dev/arr/projections/answerdocs"
	"github.com/arr-dev/arr/projections/identity"
	"github.com/arr-dev/arr/projections/parcels"
)

// firstQuestion is the question the ready message and the README's first
// requests ask the answer service: one the index arr seeds itself with (its
// own documentation) answers.
const firstQuestion = "Which port does the embedded PostgreSQL listen on?"

// readyProjections are the read models the first requests read: keys
// (identity), the demo parcels and the seeded index. arr up is ready when
// they hold every event in the log when the seeding ended.
func readyProjections() []string { return []string{identity.Name, parcels.Name, answerdocs.Name} }

// terminalOf is f when it is a terminal, else nil: the ready message is
// for a person at a terminal, never for a log collector.
func terminalOf(f *os.File) io.Writer {
	if term.IsTerminal(int(f.Fd())) {
		return f
	}
	return nil
}

// readiness is what the ready message is made of.
type readiness struct {
	// bases are the base URLs of the services (answer, gateway, records).
	bases map[string]string
	// self is how the user invoked arr (./bin/arr).
	self string
	// sameEnv: the process runs on a DATABASE_URL or ARR_DATA_DIR of its
	// own, which a CLI command in another terminal needs too.
	sameEnv bool
	// upstream: a catalog chat model has an upstream configured.
	upstream bool
}

// message is the ready message: the three URLs, the commands for a first
// key and one curl, in the words a terminal prints.
func (r readiness) message() string {
	var b strings.Builder
	b.WriteString("\narr is ready: the answer service, the routing gateway and the records service, on one event log.\n\n")
	row := func(name, path, pages string) {
		fmt.Fprintf(&b, "  %-8s %-40s %s\n", name, r.bases[name]+path, pages)
	}
	row("answer", "/api/v1/answer", "contract /openapi.json, account /account")
	row("gateway", "/v1", "contract /openapi.json, account /account")
	row("records", "/api/v1/parcels", "contract /openapi.json, account /account, map /map")
	where := "in another terminal, in this directory"
	if r.sameEnv {
		where += ", with the same DATABASE_URL and ARR_DATA_DIR"
	}
	fmt.Fprintf(&b, "\nA first key and a first question (%s):\n\n", where)
	fmt.Fprintf(&b, "  %s accounts create --email you@example.com\n", r.self)
	fmt.Fprintf(&b, "  ANSWER_KEY=$(%s keys mint --email you@example.com --service answer)\n", r.self)
	// The URL comes from ARR_PUBLIC_BASE_URL, whose path may hold what a
	// shell acts on ($, ;, '): quoted, the line pastes as it reads.
	fmt.Fprintf(&b, "  curl -s -w '\\n' %s -H \"Authorization: Bearer $ANSWER_KEY\" -d '{\"q\":\"%s\"}'\n\n", shellWord(r.bases["answer"]+"/api/v1/answer"), firstQuestion)
	b.WriteString("Keys for the others: --service gateway or --service records.")
	if !r.upstream {
		b.WriteString(" The gateway has no upstream yet: start arr with\nARR_UPSTREAM_BASE_URL=http://127.0.0.1:11434/v1 ARR_UPSTREAM_MODEL=llama3.2 (Ollama, or any OpenAI-compatible server)\nor with a provider's key (OPENAI_API_KEY, ANTHROPIC_API_KEY, ...) set.")
	}
	b.WriteString("\nMore first requests: README.md, \"First requests\". Ctrl-C stops arr.\n\n")
	return b.String()
}

// announceReady waits until the first requests would be answered (the
// seeding of the index is over and the read models they read hold the
// log), then says so: one log line, and the ready message once to the
// terminal, if there is one. It returns when ctx ends first.
func (s *system) announceReady(ctx context.Context, seeded <-chan struct{}, r readiness, terminal io.Writer) {
	select {
	case <-seeded:
	case <-ctx.Done():
		return
	}
	var head uint64
	for {
		h, err := s.store.Head(ctx)
		if err == nil {
			head = h
			break
		}
		if !wait.Sleep(ctx, time.Second) { // a database that comes back later: try again
			return
		}
	}
	// It only watches the checkpoints (the runner applies the events):
	// runner.WaitFor would step the projections itself, beside the runner.
	for !s.readModelsAt(ctx, head) {
		if !wait.Sleep(ctx, 250*time.Millisecond) {
			return
		}
	}
	args := []any{}
	for _, svc := range []string{"answer", "gateway", "records"} {
		args = append(args, slog.String(svc, r.bases[svc]))
	}
	s.log.Info("ready", args...)
	if terminal != nil {
		// Everything in it is arr's text or the configuration's, which is
		// checked; shown escapes what a terminal would act on all the same.
		_, _ = io.WriteString(terminal, shown(r.message()))
	}
}

// readModelsAt reports whether every read model of readyProjections holds
// the log up to head (false on an error: asked again later).
func (s *system) readModelsAt(ctx context.Context, head uint64) bool {
	cps, err := s.app.Queries.Status.Checkpoints(ctx)
	if err != nil {
		return false
	}
	for _, name := range readyProjections() {
		at := false
		for _, c := range cps {
			if c.Name == name && c.Position >= 0 && uint64(c.Position) >= head {
				at = true
			}
		}
		if !at {
			return false
		}
	}
	return true
}
