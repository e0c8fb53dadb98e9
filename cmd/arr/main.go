// Command arr is the one binary of arr: the three HTTP services, the
// projection runner and the operator, analyst and auditor tools. Run
// `arr help` for the subcommands.
//
// The application is put together in one place, buildApplication
// (application.go), from one Config; a serving process is run (cmd_serve.go):
// the components of its roles (process.go) under a lifecycle group
// (internal/lifecycle) that owns the shutdown order and grace period.
// docs/architecture.md describes the shape.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"syscall"

	"github.com/arr-dev/arr/readapi/httpx"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if cmd, err := newRoot(version).ExecuteContextC(ctx); err != nil {
		os.Exit(reportError(os.Stderr, remedyContext{cmd: cmd, self: selfName()}, err))
	}
}

// reportError prints a failed command's error the way the HTTP services
// would answer it: status, stable code and message, and on the next lines
// the command that makes what it found missing (remedies). Domain errors
// and bad configuration exit 2 (the caller must change something),
// everything else 1.
func reportError(w io.Writer, r remedyContext, err error) int {
	var ce ConfigErrors
	if errors.As(err, &ce) {
		// One line per bad setting: the variable, the value, what it takes.
		for _, e := range ce {
			fmt.Fprintf(w, "arr: configuration: %s\n", shown(e.Error()))
		}
		return 2
	}
	if errors.Is(err, fs.ErrNotExist) {
		// A file the command was given, or one it needs, is not there:
		// the caller has something to fix.
		fmt.Fprintf(w, "arr: %s\n", shown(err.Error()))
		return 2
	}
	p := httpx.ProblemOf(err)
	if p.Status >= 500 {
		fmt.Fprintf(w, "arr: %s\n", shown(err.Error()))
		return 1
	}
	fmt.Fprintf(w, "arr: %s (%d %s)\n", shown(p.Message), p.Status, p.Code)
	if fix, ok := remedies()[p.Code]; ok {
		fmt.Fprintf(w, "  %s\n", shown(fix(r)))
	}
	return 2
}
