package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
)

// result is one question's line in the results file.
type result struct {
	ID        string   `json:"id"`
	Split     string   `json:"split"`
	Kind      string   `json:"kind"`
	Question  string   `json:"question"`
	Pages     []string `json:"pages"`
	Status    int      `json:"status"`
	Error     string   `json:"error,omitempty"`
	LatencyMS float64  `json:"latency_ms"`
	AnswerID  string   `json:"answer_id,omitempty"`
	Cached    bool     `json:"cached"`
	Synthesis string   `json:"synthesis"`
	Answer    string   `json:"answer"`
	Sources   []source `json:"sources"`
	scores
	Costs *costs `json:"costs,omitempty"`
}

// tally counts the marks of a set of results. The percentages of fact,
// grounded, cited, readable and lead are of the answerable questions;
// wrong-subject and suspect count answers of every question; abstention
// precision is the share of the abstaining replies whose question was
// unanswerable, recall the share of unanswerable questions abstained on.
type tally struct {
	n, fact, grounded, cited, readable, lead int
	statements                               []int
	// unanswerable questions; abstentions on them and on answerable ones.
	unanswerable, abstainedU, abstainedA int
	wrong, suspect                       int
}

func (t *tally) add(r result, unanswerable bool) {
	t.wrong += b2i(r.WrongSubject)
	t.suspect += b2i(len(r.Suspect) > 0)
	if unanswerable {
		t.unanswerable++
		t.abstainedU += b2i(r.Abstained)
		return
	}
	t.abstainedA += b2i(r.Abstained)
	t.n++
	t.fact += b2i(r.Fact)
	t.grounded += b2i(r.Grounded)
	t.cited += b2i(r.Cited)
	t.readable += b2i(r.Readable)
	t.lead += b2i(r.Lead)
	if r.Status == 200 {
		t.statements = append(t.statements, r.Statements)
	}
}

func (t tally) String() string {
	return fmt.Sprintf("fact %d%% grounded %d%% cited %d%% readable %d%% lead %d%% statements p50 %d wrong-subject %d suspect %d abstain precision %s recall %s (unanswerable %d/%d, answerable %d/%d)",
		pct(t.fact, t.n), pct(t.grounded, t.n), pct(t.cited, t.n), pct(t.readable, t.n), pct(t.lead, t.n), median(t.statements),
		t.wrong, t.suspect, pctOrDash(t.abstainedU, t.abstainedU+t.abstainedA), pctOrDash(t.abstainedU, t.unanswerable),
		t.abstainedU, t.unanswerable, t.abstainedA, t.n)
}

// pctOrDash is pct, or "-" when there is nothing to divide by.
func pctOrDash(a, n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("%d%%", pct(a, n))
}

func pct(a, n int) int {
	if n == 0 {
		return 0
	}
	return (200*a + n) / (2 * n) // rounded half up
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// summary is the one line the eval prints.
func summary(rs []result, ix indexReport) string {
	var all tally
	by := map[string]*tally{"tune": {}, "heldout": {}}
	var lat []time.Duration
	for _, r := range rs {
		u := r.Kind == "unanswerable"
		all.add(r, u)
		by[r.Split].add(r, u)
		if r.Status == 200 && !r.Cached {
			lat = append(lat, time.Duration(r.LatencyMS*float64(time.Millisecond)))
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "answer eval: %d questions (tune %d, heldout %d; %d of them unanswerable): %s", all.n+all.unanswerable,
		by["tune"].n+by["tune"].unanswerable, by["heldout"].n+by["heldout"].unanswerable, all.unanswerable, all)
	for _, s := range []string{"tune", "heldout"} {
		if by[s].n+by[s].unanswerable > 0 {
			fmt.Fprintf(&b, " | %s %s", s, by[s])
		}
	}
	fmt.Fprintf(&b, " | p50 %s p99 %s", ms(percentile(lat, 50)), ms(percentile(lat, 99)))
	if st := stages(rs); st != "" {
		fmt.Fprintf(&b, " | stages p50 %s", st)
	}
	fmt.Fprintf(&b, " | indexed %d/%d pages", ix.Indexed, ix.Pages)
	if ix.Seconds > 0 {
		fmt.Fprintf(&b, " at %.0f pages/s", float64(ix.Indexed)/ix.Seconds)
	}
	if errs := countErrors(rs); errs > 0 {
		fmt.Fprintf(&b, " | %d requests failed", errs)
	}
	return b.String()
}

func countErrors(rs []result) int {
	n := 0
	for _, r := range rs {
		if r.Error != "" {
			n++
		}
	}
	return n
}

// stages are the medians of the stage durations the events reported.
func stages(rs []result) string {
	names := []string{"search", "fetch", "extract", "rank", "synthesis"}
	vals := make([][]time.Duration, len(names))
	for _, r := range rs {
		if r.Costs == nil {
			continue
		}
		for i, us := range []int64{r.Costs.SearchUS, r.Costs.FetchUS, r.Costs.ExtractUS, r.Costs.RankUS, r.Costs.SynthesisUS} {
			vals[i] = append(vals[i], time.Duration(us)*time.Microsecond)
		}
	}
	if len(vals[0]) == 0 {
		return ""
	}
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + " " + ms(percentile(vals[i], 50))
	}
	return strings.Join(parts, " ")
}

// percentile is the nearest-rank percentile p of ds.
func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := (len(s)*p+99)/100 - 1
	return s[max(0, min(i, len(s)-1))]
}

func ms(d time.Duration) string {
	if d < 10*time.Millisecond {
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%dms", d.Round(time.Millisecond).Milliseconds())
}

// writeResults writes the results (JSON lines) and a summary document next
// to them, named by the run's start time, and returns the results path.
func writeResults(dir string, stamp time.Time, rs []result, ix indexReport, line string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("creating %s: %w", dir, err)
	}
	base := filepath.Join(dir, "answer-"+stamp.UTC().Format("20060102T150405Z"))
	f, err := os.Create(base + ".jsonl")
	if err != nil {
		return "", fmt.Errorf("creating the results file: %w", err)
	}
	enc := json.NewEncoder(f)
	enc.SetEscapeHTML(false)
	for _, r := range rs {
		if err := enc.Encode(r); err != nil {
			f.Close()
			return "", fmt.Errorf("writing the results: %w", err)
		}
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("writing the results: %w", err)
	}
	b, err := json.MarshalIndent(map[string]any{"summary": line, "index": ix, "results": filepath.Base(base + ".jsonl")}, "", "  ")
	if err != nil {
		return "", fmt.Errorf("encoding the summary: %w", err)
	}
	if err := os.WriteFile(base+".summary.json", append(b, '\n'), 0o644); err != nil {
		return "", fmt.Errorf("writing the summary: %w", err)
	}
	return base + ".jsonl", nil
}

// copyFile copies src to dst (the arr log, kept with the results).
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("copying %s: %w", src, err)
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return fmt.Errorf("copying to %s: %w", dst, err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copying to %s: %w", dst, err)
	}
	return out.Close()
}

// median is the middle of ns (the lower of the two middles); 0 for none.
func median(ns []int) int {
	if len(ns) == 0 {
		return 0
	}
	s := slices.Clone(ns)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}
