// Command arr is the one binary of arr: the three HTTP services, the
// projection runner and the operator, analyst and auditor tools. Run
// `arr help` for the subcommands.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := newRoot(version).ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "arr:", err)
		os.Exit(1)
	}
}
