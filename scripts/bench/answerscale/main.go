// Command answerscale measures the local index at scale: load builds a
// synthetic corpus of N pages from the Python and Git manuals' sections
// (Debian's python3.11-doc and git-doc; every page three sections of the
// manuals drawn at random, under a title of its own: fine for scale, not
// for quality) and writes it into a database's answer_docs read model
// through the projection's write (answerdocs.Store, the code a
// DocumentIndexed batch runs, its GIN index and statistics kept up as a
// live read model keeps them), then adds single pages; search, in a
// process of its own, asks the evaluation's questions through the
// answer service's searcher and prints p50/p99 and the process's peak
// RSS. Used by scripts/bench/answer-local.sh scale.
//
//	go run ./scripts/bench/answerscale load -pages 10000 -db arr_bench_local_10k
//	go run ./scripts/bench/answerscale search -db arr_bench_local_10k [-engine stored|memory]
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/arr-dev/arr/migrations/migratetest"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: answerscale load|search [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "load":
		err = load(context.Background(), migratetest.AdminURL(), os.Args[2:])
	case "search":
		err = search(context.Background(), migratetest.AdminURL(), os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
