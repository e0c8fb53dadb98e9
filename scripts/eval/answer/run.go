package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// run checks the questions against the corpus and, unless o.check, runs
// the evaluation and prints its summary line.
func run(ctx context.Context, o options) error {
	if err := o.validate(); err != nil {
		return err
	}
	start := time.Now()
	norm := newNormalizer()
	qs, err := loadQuestions(o.questions, o.holdoutEvery, norm)
	if err != nil {
		return fmt.Errorf("the question file %s has defects:\n%w", o.questions, err)
	}
	pages, err := loadPages(o.pages, o.docs)
	if err != nil {
		return fmt.Errorf("the page list %s has defects:\n%w", o.pages, err)
	}
	c, err := serveCorpus(o.docs, norm)
	if err != nil {
		return err
	}
	defer c.close()
	var show io.Writer
	if o.check && o.verbose {
		show = os.Stderr
	}
	if err := checkQuestions(ctx, c, qs, pages, show); err != nil {
		return fmt.Errorf("questions whose facts are not on their pages:\n%w", err)
	}
	asked := pick(qs, o.split)
	if o.check {
		unanswerable := 0
		for _, q := range qs {
			unanswerable += b2i(q.unanswerable())
		}
		fmt.Printf("answer eval: %d questions (tune %d, heldout %d; %d unanswerable) check out against %d pages of %s\n",
			len(qs), len(pick(qs, "tune")), len(pick(qs, "heldout")), unanswerable, len(pages), o.docs)
		return nil
	}

	dir, err := os.MkdirTemp("", "arr-eval-answer-")
	if err != nil {
		return fmt.Errorf("creating a work directory: %w", err)
	}
	var cu cleanups
	defer cu.run()
	cu.add(func() { os.RemoveAll(dir) })
	a, err := startArr(ctx, o, dir, &cu)
	if err != nil {
		return err
	}
	var ix indexReport
	if o.seeded {
		logf(o, "arr up is serving the answer service on %s; waiting for it to seed its index with arr's documentation", a.base)
		if err := c.seedDocs(a.base, pages); err != nil {
			return err
		}
		ix, err = a.waitSeeded(ctx, len(pages))
	} else {
		logf(o, "arr up is serving the answer service on %s; indexing %d pages from %s", a.base, len(pages), c.base)
		ix, err = a.index(ctx, c, pages, o.batch)
	}
	if err != nil {
		return err
	}
	for _, e := range ix.Aborted {
		fmt.Fprintf(os.Stderr, "answer eval: `arr answer index add` aborted a batch: %s\n", e)
	}
	for p, e := range ix.Failed {
		fmt.Fprintf(os.Stderr, "answer eval: %s could not be indexed: %s\n", p, e)
	}
	logf(o, "indexed %d/%d pages (%d documents) in %.1fs", ix.Indexed, ix.Pages, ix.Documents, ix.Seconds)

	// One question first, not scored: the answer service builds its
	// in-memory index once after documents change, and the latencies below
	// are of answering, not of that build.
	if _, _, took, err := a.ask(ctx, "warm-up: what is the local index?"); err == nil {
		logf(o, "warm-up question answered in %s", took)
	}
	sc := newScorer(norm, c)
	sc.subj = newSubjects(gitCommands(o.docs))
	rs := make([]result, 0, len(asked))
	for _, q := range asked {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("asking: %w", err)
		}
		r := result{ID: q.ID, Split: q.Split, Kind: q.Kind, Question: q.Question, Pages: q.Pages}
		rep, status, took, err := a.ask(ctx, q.Question)
		r.Status, r.LatencyMS = status, float64(took.Microseconds())/1000
		if err != nil {
			r.Error = err.Error()
			r.Why = []string{"request: " + r.Error}
		} else {
			r.AnswerID, r.Cached, r.Synthesis, r.Answer, r.Sources = rep.AnswerID, rep.Cached, rep.Synthesis, rep.Answer, rep.Sources
			r.scores = sc.score(ctx, q, rep)
			if rep.Cached {
				r.Why = append(r.Why, "latency: the answer came from the cache")
			}
		}
		// Held-out questions are read as summary lines only: their
		// results go to the results file, never to the terminal.
		if o.verbose && q.Split != "heldout" {
			fmt.Fprintf(os.Stderr, "%s %-7s fact=%-5v cited=%-5v grounded=%-5v readable=%-5v abstained=%-5v wrong_subject=%-5v suspect=%d %6.0fms %s\n", q.ID, q.Split,
				r.Fact, r.Cited, r.Grounded, r.Readable, r.Abstained, r.WrongSubject, len(r.Suspect), r.LatencyMS, q.Question)
			for _, w := range r.Why {
				fmt.Fprintf(os.Stderr, "    %s\n", w)
			}
		}
		rs = append(rs, r)
	}
	if cs, err := a.stageCosts(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "answer eval: no stage latencies: %v\n", err)
	} else {
		for i := range rs {
			if c, ok := cs[rs[i].AnswerID]; ok {
				rs[i].Costs = &c
			}
		}
	}
	line := summary(rs, ix)
	path, err := writeResults(o.out, start, rs, ix, line)
	if err != nil {
		return err
	}
	if o.features {
		fpath := strings.TrimSuffix(path, ".jsonl") + ".features.jsonl"
		if err := labelFeatures(filepath.Join(dir, featuresFile), fpath, asked, norm); err != nil {
			return err
		}
		logf(o, "labelled candidate features in %s", fpath)
	}
	logPath := strings.TrimSuffix(path, ".jsonl") + ".arr.log"
	if err := copyFile(filepath.Join(dir, "arr-up.log"), logPath); err != nil {
		fmt.Fprintf(os.Stderr, "answer eval: %v\n", err)
	}
	fmt.Println(line)
	logf(o, "results in %s (arr's log in %s); took %s", path, logPath, time.Since(start).Round(time.Second))
	return nil
}

// gitCommands are the commands of a Git manual's git-NAME.html pages in
// dir (none elsewhere): what "git NAME" may name for the subject check.
func gitCommands(dir string) map[string]bool {
	names, _ := filepath.Glob(filepath.Join(dir, "git-*.html"))
	m := map[string]bool{}
	for _, n := range names {
		m[strings.TrimSuffix(strings.TrimPrefix(filepath.Base(n), "git-"), ".html")] = true
	}
	return m
}

func logf(o options, format string, a ...any) {
	if o.verbose {
		fmt.Fprintf(os.Stderr, "answer eval: "+format+"\n", a...)
	}
}
