package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5"
)

// record is one completion as arr recorded it: its audit entry's payload
// (domain/audit.Entry's fields the bench reads).
type record struct {
	Seq          int64     `json:"seq"`
	Model        string    `json:"model"`
	Stream       bool      `json:"stream"`
	Prompt       int64     `json:"prompt_tokens"`
	Completion   int64     `json:"completion_tokens"`
	CacheRead    int64     `json:"cache_read_tokens"`
	CacheWrite   int64     `json:"cache_write_tokens"`
	CostMicroUSD int64     `json:"cost_micro_usd"`
	StartedAt    time.Time `json:"started_at"`
}

// auditRecords waits (up to 30 s) until the audit read model holds an
// entry for each of the calls the stand-in answered, then reads them in
// chain order.
func auditRecords(ctx context.Context, db string, calls int) ([]record, error) {
	conn, err := pgx.Connect(ctx, db)
	if err != nil {
		return nil, err
	}
	defer conn.Close(ctx)
	deadline := time.Now().Add(30 * time.Second)
	for {
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM rm_audit.entries`).Scan(&n); err == nil && n >= calls {
			break
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the audit read model has fewer entries than the %d upstream calls after 30s", calls)
		}
		time.Sleep(200 * time.Millisecond)
	}
	rows, err := conn.Query(ctx, `SELECT seq, payload FROM rm_audit.entries ORDER BY seq`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []record
	for rows.Next() {
		var r record
		var payload []byte
		if err := rows.Scan(&r.Seq, &payload); err != nil {
			return nil, err
		}
		if err := json.Unmarshal(payload, &r); err != nil {
			return nil, fmt.Errorf("audit entry %d: %w", r.Seq, err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// totals are a turn's (or the session's) figures.
type totals struct {
	Calls      int     `json:"calls"`
	Prompt     int64   `json:"prompt_tokens"`
	CacheRead  int64   `json:"cache_read_tokens"`
	CacheWrite int64   `json:"cache_write_tokens"`
	Output     int64   `json:"output_tokens"`
	PaidUSD    float64 `json:"paid_usd"`
	// PlainUSD is the same tokens at the model's plain input price (every
	// prompt token, cached or not) and its output price.
	PlainUSD float64 `json:"plain_usd"`
}

func (t *totals) add(r record) {
	t.Calls++
	t.Prompt += r.Prompt
	t.CacheRead += r.CacheRead
	t.CacheWrite += r.CacheWrite
	t.Output += r.Completion
	t.PaidUSD += float64(r.CostMicroUSD) / 1e6
	for _, m := range benchModels {
		if r.Model == m.ID || r.Model == m.Upstream {
			t.PlainUSD += float64(r.Prompt)*m.In/1000 + float64(r.Completion)*m.Out/1000
		}
	}
}

// report prints a row per turn (its calls are the records that started
// in its window) and the summary line, and returns the session's totals.
func report(w io.Writer, session []turn, recs []record) totals {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "turn\tcalls\tprompt tokens\tcache read\tcache write\toutput\tpaid $\tplain input price $\t")
	var all totals
	for _, t := range session {
		var tt totals
		for _, r := range recs {
			if !r.StartedAt.Before(t.Began) && !r.StartedAt.After(t.Ended) {
				tt.add(r)
			}
		}
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%d\t%d\t%.6f\t%.6f\t\n", t.N, tt.Calls, tt.Prompt, tt.CacheRead, tt.CacheWrite, tt.Output, tt.PaidUSD, tt.PlainUSD)
	}
	for _, r := range recs {
		all.add(r)
	}
	fmt.Fprintf(tw, "all\t%d\t%d\t%d\t%d\t%d\t%.6f\t%.6f\t\n", all.Calls, all.Prompt, all.CacheRead, all.CacheWrite, all.Output, all.PaidUSD, all.PlainUSD)
	tw.Flush()
	pct, ratio := 0.0, 0.0
	if all.Prompt > 0 {
		pct = 100 * float64(all.CacheRead) / float64(all.Prompt)
	}
	if all.PlainUSD > 0 {
		ratio = all.PaidUSD / all.PlainUSD
	}
	fmt.Fprintf(w, "\nclaude code session of %d turns through arr: prompt %d tokens, cache read %d (%.1f%%), cache write %d; paid $%.6f, at the plain input price $%.6f (A/B = %.3f)\n",
		len(session), all.Prompt, all.CacheRead, pct, all.CacheWrite, all.PaidUSD, all.PlainUSD, ratio)
	return all
}
