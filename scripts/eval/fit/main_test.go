package main

import "testing"

// A feature that marks the fact-stating candidate gets a positive weight,
// one that marks a wrong one a negative weight, and the fitted weights
// put the fact first where the logged scores did not.
func TestFit(t *testing.T) {
	var qs []query
	for i := range 10 {
		q := query{file: 0, x: [][]float64{{1, 0}, {0, 1}, {0, 0}}, y: []bool{true, false, false},
			text: []string{"fact", "wrong", "other"}, score: []float64{0, 1, 0.5}}
		if i%2 == 1 {
			q.x[2] = []float64{0, 1} // two wrong ones marked
		}
		qs = append(qs, q)
	}
	w := fit(qs, 2, options{l2: 0.01, iters: 200, rate: 0.5, folds: 5})
	if w[0] <= 0 || w[1] >= 0 {
		t.Fatalf("weights %v: want the fact's feature positive, the wrong one's negative", w)
	}
	all := func(query) bool { return true }
	if n := count(qs, all, weighted(w), 1); n != 10 {
		t.Fatalf("fitted top-1 %d of 10", n)
	}
	if n := count(qs, all, logged, 1); n != 0 {
		t.Fatalf("logged top-1 %d of 10, want 0", n)
	}
	if n := count(qs, all, logged, 3); n != 10 {
		t.Fatalf("logged top-3 %d of 10, want 10", n)
	}
	cv := crossValidate(qs, 2, options{l2: 0.01, iters: 200, rate: 0.5, folds: 5})
	if n := countCV(qs, cv, all, 1); n != 10 {
		t.Fatalf("cross-validated top-1 %d of 10", n)
	}
}

// A candidate within one already counted (a sentence and the same with its
// predecessor) is not counted again among the k best.
func TestHitSkipsRepeats(t *testing.T) {
	q := query{x: [][]float64{{3}, {2}, {1}}, y: []bool{false, false, true},
		text: []string{"A. B.", "B.", "C states it."}, score: []float64{3, 2, 1}}
	if !hit(q, logged, 2) {
		t.Fatal("the fact is the second distinct candidate")
	}
	if hit(q, logged, 1) {
		t.Fatal("the fact is not the first")
	}
}
