// Command fit fits the weights of the extractive writer's lead features
// (commands/research's leadFeatures: which chosen sentence comes first) to
// labelled candidate sentences:
// the features files the answer evaluation writes with -features, one a
// corpus. It uses the tune split only, never the held-out one.
//
// The model is listwise logistic regression: a question's candidates
// compete in a softmax of their weighted feature sums, and the fit
// maximises the probability of those that state the question's fact (with
// an L2 penalty), by gradient ascent from zero, deterministically. It
// prints the weights, in the table's order, to be copied into the table;
// how often the best-scored candidate states the fact (top-1) and one of
// the best three does (top-3), per file, for arr's scores as logged and
// for the fitted weights; and the same for the fitted weights by 5-fold
// cross-validation over the questions (each question's candidates scored
// by weights fitted without it).
//
//	scripts/eval/answer.sh -split tune -features -out /tmp/py
//	scripts/eval/answer-git.sh -split tune -features -out /tmp/git
//	go run ./scripts/eval/fit /tmp/py/*.features.jsonl /tmp/git/*.features.jsonl
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
)

// labelled is one question's line of a features file (scripts/eval/answer's
// Labelled).
type labelled struct {
	ID         string   `json:"id"`
	Split      string   `json:"split"`
	Features   []string `json:"features"`
	Candidates []struct {
		Text   string    `json:"text"`
		Values []float64 `json:"values"`
		Score  float64   `json:"score"`
		Fact   bool      `json:"fact"`
	} `json:"candidates"`
}

// query is one question's candidates: feature vectors, labels, the text
// (for candidates that repeat another) and arr's logged scores.
type query struct {
	file  int
	x     [][]float64
	y     []bool
	text  []string
	score []float64
}

func (q query) answerable() bool { return slices.Contains(q.y, true) }

type options struct {
	l2    float64
	iters int
	rate  float64
	folds int
	// test are features files scored by the fitted weights, not fitted
	// on: questions written after the weights' features were chosen.
	test string
}

func main() {
	var o options
	flag.Float64Var(&o.l2, "l2", 0.01, "L2 penalty on the weights")
	flag.IntVar(&o.iters, "iters", 600, "gradient steps")
	flag.Float64Var(&o.rate, "rate", 0.5, "step size")
	flag.IntVar(&o.folds, "folds", 5, "cross-validation folds")
	flag.StringVar(&o.test, "test", "", "comma-separated features files to score with the fitted weights but not fit on")
	flag.Parse()
	if err := run(o, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "fit:", err)
		os.Exit(1)
	}
}

func run(o options, files []string) error {
	if len(files) == 0 {
		return errors.New("usage: fit FEATURES.jsonl... (scripts/eval/answer -features writes them)")
	}
	var names []string
	var qs []query
	for i, f := range files {
		n, fq, err := load(f, i)
		if err != nil {
			return err
		}
		if names != nil && !slices.Equal(names, n) {
			return fmt.Errorf("%s has the features %q, %s %q: logged by different writers", f, n, files[0], names)
		}
		names, qs = n, append(qs, fq...)
	}
	if len(qs) == 0 {
		return errors.New("no tune question with candidates")
	}
	w := fit(qs, len(names), o)
	fmt.Println("weights (the features table's order):")
	for i, n := range names {
		fmt.Printf("\t%-24q %6.2f\n", n, w[i])
	}
	cv := crossValidate(qs, len(names), o)
	for i, f := range files {
		in := func(q query) bool { return q.file == i }
		fmt.Printf("%s: %d tune questions (%d answerable from the candidates): logged scores top-1 %d top-3 %d | fitted top-1 %d top-3 %d | cross-validated top-1 %d top-3 %d\n",
			f, count(qs, in, nil, 0), count(qs, func(q query) bool { return in(q) && q.answerable() }, nil, 0),
			count(qs, in, logged, 1), count(qs, in, logged, 3),
			count(qs, in, weighted(w), 1), count(qs, in, weighted(w), 3),
			countCV(qs, cv, in, 1), countCV(qs, cv, in, 3))
	}
	if o.test == "" {
		return nil
	}
	for i, f := range strings.Split(o.test, ",") {
		n, tq, err := load(f, len(files)+i)
		if err != nil {
			return err
		}
		if !slices.Equal(names, n) {
			return fmt.Errorf("%s has the features %q, not the fitted %q", f, n, names)
		}
		all := func(query) bool { return true }
		fmt.Printf("%s (not fitted on): %d questions (%d answerable): logged scores top-1 %d top-3 %d | fitted top-1 %d top-3 %d\n",
			f, len(tq), count(tq, func(q query) bool { return q.answerable() }, nil, 0),
			count(tq, all, logged, 1), count(tq, all, logged, 3), count(tq, all, weighted(w), 1), count(tq, all, weighted(w), 3))
	}
	return nil
}

// load reads the tune questions of a features file.
func load(path string, file int) ([]string, []query, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("reading: %w", err)
	}
	defer f.Close()
	var names []string
	var qs []query
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for sc.Scan() {
		var l labelled
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", path, err)
		}
		if names == nil {
			names = l.Features
		}
		if l.Split != "tune" || len(l.Candidates) == 0 {
			continue
		}
		q := query{file: file}
		for _, c := range l.Candidates {
			if len(c.Values) != len(names) {
				return nil, nil, fmt.Errorf("%s: %s: a candidate with %d values for %d features", path, l.ID, len(c.Values), len(names))
			}
			q.x, q.y = append(q.x, c.Values), append(q.y, c.Fact)
			q.text, q.score = append(q.text, c.Text), append(q.score, c.Score)
		}
		qs = append(qs, q)
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return names, qs, nil
}

// fit maximises the mean log-probability of each answerable question's
// fact-stating candidates under the softmax of w·x, less l2/2·|w|².
func fit(qs []query, n int, o options) []float64 {
	w := make([]float64, n)
	var train []query
	for _, q := range qs {
		if q.answerable() {
			train = append(train, q)
		}
	}
	if len(train) == 0 {
		return w
	}
	g := make([]float64, n)
	for range o.iters {
		clear(g)
		for _, q := range train {
			s := make([]float64, len(q.x))
			top := math.Inf(-1)
			for i, x := range q.x {
				s[i] = dot(w, x)
				top = max(top, s[i])
			}
			z, zPos := 0.0, 0.0
			for i := range s {
				s[i] = math.Exp(s[i] - top)
				z += s[i]
				if q.y[i] {
					zPos += s[i]
				}
			}
			for i, x := range q.x {
				c := -s[i] / z
				if q.y[i] {
					c += s[i] / zPos
				}
				for k := range g {
					g[k] += c * x[k]
				}
			}
		}
		for k := range w {
			w[k] += o.rate * (g[k]/float64(len(train)) - o.l2*w[k])
		}
	}
	return w
}

// crossValidate returns, for each question, the weights fitted without
// its fold.
func crossValidate(qs []query, n int, o options) [][]float64 {
	out := make([][]float64, len(qs))
	for f := range o.folds {
		var train []query
		for i, q := range qs {
			if i%o.folds != f {
				train = append(train, q)
			}
		}
		w := fit(train, n, o)
		for i := range qs {
			if i%o.folds == f {
				out[i] = w
			}
		}
	}
	return out
}

// scorer scores candidate i of q.
type scorer func(q query, i int) float64

func logged(q query, i int) float64 { return q.score[i] }

func weighted(w []float64) scorer { return func(q query, i int) float64 { return dot(w, q.x[i]) } }

// hit reports whether one of the k best-scored candidates of q (a
// candidate within one already counted is not counted again) states the
// fact.
func hit(q query, s scorer, k int) bool {
	order := make([]int, len(q.x))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return -cmpFloat(s(q, a), s(q, b)) })
	var taken []string
	for _, i := range order {
		if slices.ContainsFunc(taken, func(t string) bool { return strings.Contains(t, q.text[i]) || strings.Contains(q.text[i], t) }) {
			continue
		}
		if q.y[i] {
			return true
		}
		if taken = append(taken, q.text[i]); len(taken) == k {
			return false
		}
	}
	return false
}

// count counts the questions in (a filter) and, with a scorer, those whose
// k best candidates state the fact.
func count(qs []query, in func(query) bool, s scorer, k int) int {
	n := 0
	for _, q := range qs {
		if in(q) && (s == nil || hit(q, s, k)) {
			n++
		}
	}
	return n
}

func countCV(qs []query, cv [][]float64, in func(query) bool, k int) int {
	n := 0
	for i, q := range qs {
		if in(q) && hit(q, weighted(cv[i]), k) {
			n++
		}
	}
	return n
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
