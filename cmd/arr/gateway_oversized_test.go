package main_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/arr-dev/arr/adapters/upstream/upstreamtest"
)

// TestOversizedRequestsRefuseOnlyThemselves: requests whose maximum cost
// cannot fit a budget, sent concurrently with small ones over two gateway
// processes (so that they share reservation rounds), are refused 429
// budget_exceeded (type insufficient_quota) and nothing else is: every
// small request is answered, none is refused rate_limit_exceeded (the
// keys have no rpm or tpm limit); first for a key's own budget, then for
// an account budget two keys share.
func TestOversizedRequestsRefuseOnlyThemselves(t *testing.T) {
	g := newLimitedGateway(t)
	// An oversized request names the high tier without max_tokens: it
	// reserves the dearest high model's whole context window (about $15),
	// over a $5 budget. A small one reserves well under a cent.
	mix := func(i int) map[string]any {
		if i%5 == 0 {
			return map[string]any{"model": "high", "messages": userMsg(fmt.Sprintf("oversized request %d", i))}
		}
		return map[string]any{"model": "gpt-4.1-nano", "max_tokens": 4, "messages": userMsg(fmt.Sprintf("small request %d", i))}
	}
	check := func(what string, as []limitAnswer) {
		t.Helper()
		var small, smallOK, over, overRefused int
		for i, a := range as {
			if i%5 == 0 {
				over++
				if a.status == 429 && a.code == "budget_exceeded" && a.typ == "insufficient_quota" && a.header.Get("Retry-After") != "" {
					overRefused++
				} else {
					t.Errorf("%s: oversized request %d: %d %s %s %s", what, i, a.status, a.typ, a.code, a.body)
				}
				continue
			}
			small++
			if a.status == 200 {
				smallOK++
			} else {
				t.Logf("%s: small request %d refused: %d %s", what, i, a.status, a.body)
			}
		}
		t.Logf("%s: %d of %d small requests answered, %d of %d oversized refused budget_exceeded", what, smallOK, small, overRefused, over)
		if smallOK != small || overRefused != over {
			t.Fatalf("%s: %d of %d small requests answered (want all), %d of %d oversized refused budget_exceeded (want all)",
				what, smallOK, small, overRefused, over)
		}
	}

	k := g.mintLimited(t, "--max-budget-usd", "5", "--budget-period", "day")
	g.up.Set("", upstreamtest.Behavior{Latency: 20 * time.Millisecond})
	check("a key's budget", g.burst(t, 200, k.Secret, mix, 0))

	// Two keys without limits of their own share the account's budget.
	var b map[string]any
	g.mustArr(&b, "accounts", "budget", "--email", limitedEmail, "--max-budget-usd", "5", "--budget-period", "month", "--json")
	keys := []string{g.mintLimited(t).Secret, g.mintLimited(t).Secret}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 200, MaxConnsPerHost: 200}, Timeout: time.Minute}
	as := make([]limitAnswer, 200)
	var wg sync.WaitGroup
	for i := range as {
		base := g.gateway
		if i%2 == 1 {
			base = g.second
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			as[i] = post(t, client, base, keys[(i/2)%2], mix(i), false)
		}()
	}
	wg.Wait()
	check("an account budget two keys share", as)
}
