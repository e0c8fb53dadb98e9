package callusage_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/arr-dev/arr/migrations/migratetest"
	"github.com/arr-dev/arr/projections/callusage"
	"github.com/arr-dev/arr/projections/logstats"
	"github.com/arr-dev/arr/projections/projectiontest"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/domain/account"
)

func usageTable(t testing.TB, pool *pgxpool.Pool) string {
	t.Helper()
	var js *string
	if err := pool.QueryRow(context.Background(), `SELECT json_agg(u ORDER BY account_id, day, service, key_id)::text FROM rm_usage.usage_daily u`).Scan(&js); err != nil {
		t.Fatal(err)
	}
	if js == nil {
		return ""
	}
	return *js
}

// TestUsageReportsAndRebuild: counts sent in many small commands add up per
// key, service and day; the reports are zero-filled; a retried command adds
// nothing; and a rebuild from the log yields the same table as the live
// read model built in small batches.
func TestUsageReportsAndRebuild(t *testing.T) {
	pool, _ := migratetest.NewPool(t)
	_, st, r := projectiontest.Setup(t, pool, callusage.Projection{}, logstats.Projection{})
	now := time.Date(2026, 11, 22, 15, 0, 0, 0, time.UTC)
	cmds, err := commands.New(commands.Config{Store: st, Clock: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	type keyOf struct {
		account, key uuid.UUID
		svc          account.Service
	}
	var keys []keyOf
	accounts := []uuid.UUID{uuid.New(), uuid.New(), uuid.New()}
	for _, a := range accounts {
		for _, svc := range account.Services() {
			keys = append(keys, keyOf{a, uuid.New(), svc})
		}
	}
	days := []string{"2026-11-18", "2026-11-20", "2026-11-21", "2026-11-22"}
	want := map[keyOf]map[string]int64{}
	rng := rand.New(rand.NewPCG(1, 2))
	var last uint64
	var lastCmd commands.CountCalls
	for i := 0; i < 400; i++ {
		k := keys[rng.IntN(len(keys))]
		day := days[rng.IntN(len(days))]
		n := int64(1 + rng.IntN(50))
		c := commands.CountCalls{AccountID: k.account, Day: day, Keys: []commands.KeyCalls{{EventID: uuid.New(), KeyID: k.key, Service: k.svc, Calls: n}}}
		pos, err := cmds.CountCalls.Handle(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		last, lastCmd = pos, c
		if want[k] == nil {
			want[k] = map[string]int64{}
		}
		want[k][day] += n
	}
	// The same command again (a retry after an unknown outcome) adds nothing.
	if pos, err := cmds.CountCalls.Handle(ctx, lastCmd); err != nil || pos != last {
		t.Fatalf("retrying a count: position %d, %v; want the first append's %d", pos, err, last)
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := r.WaitFor(wctx, callusage.Name, last); err != nil {
		t.Fatal(err)
	}
	q := callusage.NewQueries(pool)
	for _, k := range keys {
		got, err := q.Key(ctx, k.key, 5, now)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 5 || got[0].Day != "2026-11-18" || got[4].Day != "2026-11-22" {
			t.Fatalf("key report days: %+v", got)
		}
		for _, d := range got {
			if d.Calls != want[k][d.Day] {
				t.Fatalf("key %s on %s: %d calls, want %d", k.key, d.Day, d.Calls, want[k][d.Day])
			}
		}
	}
	for _, a := range accounts {
		got, err := q.Account(ctx, a, 30, now)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 30*3 || got[0].Day != "2026-10-24" || got[len(got)-1].Day != "2026-11-22" {
			t.Fatalf("account report: %d rows from %s to %s, want 90 from 2026-10-24 to 2026-11-22", len(got), got[0].Day, got[len(got)-1].Day)
		}
		for i, d := range got {
			if d.Service != account.Services()[i%3] {
				t.Fatalf("row %d service %s, want services in catalog order", i, d.Service)
			}
			var w int64
			for _, k := range keys {
				if k.account == a && k.svc == d.Service {
					w += want[k][d.Day]
				}
			}
			if d.Calls != w {
				t.Fatalf("account %s %s on %s: %d calls, want %d", a, d.Service, d.Day, d.Calls, w)
			}
		}
		perKey, err := q.AccountKeys(ctx, a, 30, now)
		if err != nil {
			t.Fatal(err)
		}
		var sum, wsum int64
		for _, k := range perKey {
			sum += k.Calls
		}
		for _, k := range keys {
			if k.account == a {
				for _, n := range want[k] {
					wsum += n
				}
			}
		}
		if sum != wsum {
			t.Fatalf("per-key rows of account %s add up to %d, want %d", a, sum, wsum)
		}
	}
	if _, err := q.Account(ctx, accounts[0], 0, now); err == nil {
		t.Fatalf("a report of 0 days was accepted")
	}

	live := usageTable(t, pool)
	if err := r.Rebuild(ctx, callusage.Name, nil); err != nil {
		t.Fatal(err)
	}
	if rebuilt := usageTable(t, pool); rebuilt != live || live == "" {
		t.Fatalf("rebuilt usage differs from the live read model\nlive:    %.300s\nrebuilt: %.300s", live, rebuilt)
	}
}
