// Command answer evaluates arr's answer service black-box, over HTTP and
// the CLI, on the Python 3.11 documentation (Debian's python3.11-doc): it
// serves the HTML on loopback, indexes a fixed page list by URL with
// `arr answer index add`, asks every question of a question file once on a
// fresh database and scores each answer (fact, cited, grounded, readable,
// latency). See scripts/eval/answer.sh and docs/evaluation.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"
)

// options are the command's flags.
type options struct {
	split     string
	questions string
	pages     string
	out       string
	docs      string
	arrBin    string
	dbURL     string
	batch     int
	timeout   time.Duration
	verbose   bool
	check     bool
	// features: keep every answer's candidate sentences with their
	// feature values, each labelled by whether it states the fact (the
	// input of scripts/eval/fit).
	features bool
	// holdoutEvery: ids divisible by it are held out (questions.go).
	holdoutEvery int
	// seeded: the pages are arr's own reference documents (docs/*.md)
	// that the answer service seeds its local index with
	// (ARR_ANSWER_SEED=on); nothing is indexed by URL, and a citation of
	// /docs/{doc_id} on the answer service is a citation of its page.
	seeded bool
}

func main() {
	var o options
	flag.StringVar(&o.split, "split", "all", "questions to ask: tune, heldout or all")
	flag.StringVar(&o.questions, "questions", "scripts/eval/questions.json", "question file (JSON)")
	flag.StringVar(&o.pages, "pages", "scripts/eval/pages.txt", "pages to index, one path under -docs a line")
	flag.StringVar(&o.out, "out", "scripts/eval/results", "directory of the per-question results (JSON lines)")
	flag.StringVar(&o.docs, "docs", "/usr/share/doc/python3.11/html", "the Python documentation's HTML directory")
	flag.StringVar(&o.arrBin, "arr", "", "the arr binary to evaluate (required unless -check)")
	flag.StringVar(&o.dbURL, "database-url", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", "admin URL of a PostgreSQL where an eval database may be created")
	flag.IntVar(&o.batch, "batch", 25, "URLs per `arr answer index add`")
	flag.DurationVar(&o.timeout, "timeout", 15*time.Minute, "bound on the whole run")
	flag.BoolVar(&o.verbose, "v", false, "print every question's scores and reasons on stderr")
	flag.IntVar(&o.holdoutEvery, "holdout-every", 3, "the split rule of the question file: ids divisible by this are held out (3: the Python manual's; 2: the Git manual's, half)")
	flag.BoolVar(&o.features, "features", false, "also write every answer's candidate sentences with their feature values, each labelled by whether it states the fact (ANSWERS.features.jsonl, the input of scripts/eval/fit)")
	flag.BoolVar(&o.seeded, "seeded", false, "the pages (under -docs) are arr's reference documents the answer service seeds its index with (ARR_ANSWER_SEED=on): index nothing, wait for the seed, map /docs/{doc_id} citations to the pages")
	flag.BoolVar(&o.check, "check", false, "only check the question file against the corpus (every fact on every page it names) and exit")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "answer eval:", err)
		os.Exit(1)
	}
}

func (o options) validate() error {
	switch o.split {
	case "tune", "heldout", "all":
	default:
		return fmt.Errorf("-split must be tune, heldout or all, not %q", o.split)
	}
	if o.holdoutEvery < 2 {
		return fmt.Errorf("-holdout-every must be at least 2, not %d", o.holdoutEvery)
	}
	if o.batch < 1 {
		return fmt.Errorf("-batch must be at least 1, not %d", o.batch)
	}
	if !o.check && o.arrBin == "" {
		return fmt.Errorf("-arr (the arr binary to evaluate) is required")
	}
	return nil
}
