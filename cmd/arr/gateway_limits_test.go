package main_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/adapters/mail/mailtest"
	"github.com/arr-dev/arr/adapters/upstream/upstreamtest"
)

// limitedGateway is a gateway installation with a second `arr serve
// gateway` process on the same database, a clock the test moves
// (ARR_TEST_CLOCK_FILE) and one account, limited@example.com.
type limitedGateway struct {
	*gw
	second string
	clock  string
}

const limitedEmail = "limited@example.com"

func newLimitedGateway(t *testing.T, extraEnv ...string) *limitedGateway {
	t.Helper()
	clock := filepath.Join(t.TempDir(), "clock")
	if err := os.WriteFile(clock, []byte("0s"), 0o600); err != nil {
		t.Fatal(err)
	}
	g := newGateway(t, "enterprise", append([]string{"ARR_TEST_CLOCK_FILE=" + clock}, extraEnv...)...)
	g.createAccount(limitedEmail, "enterprise")
	second := "http://" + freeAddr(t)
	g.extraEnv = append(g.extraEnv, "ARR_GATEWAY_ADDR="+strings.TrimPrefix(second, "http://"))
	p2 := g.start("serve", "gateway")
	waitHealthy(t, second, p2)
	return &limitedGateway{gw: g, second: second, clock: clock}
}

// mintLimited mints a gateway key of limited@example.com with the limit
// flags given and returns its id and secret.
func (g *limitedGateway) mintLimited(t *testing.T, flags ...string) mintedKey {
	t.Helper()
	var k mintedKey
	g.mustArr(&k, append([]string{"keys", "mint", "--email", limitedEmail, "--service", "gateway", "--json"}, flags...)...)
	return k
}

// startOfMinute moves the services' clock to one second into a minute,
// plus whole minutes: a window the test controls.
func (g *limitedGateway) startOfMinute(t *testing.T, minutes int) {
	t.Helper()
	now := time.Now()
	off := now.Truncate(time.Minute).Add(time.Minute+time.Second).Sub(now) + time.Duration(minutes)*time.Minute
	if err := os.WriteFile(g.clock, []byte(off.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // the services re-read the file every 20ms
}

// limitAnswer is one response of a limit test.
type limitAnswer struct {
	status  int
	header  http.Header
	typ     string
	code    string
	body    string
	spentOK bool
}

// post sends one chat completion with key to base; a stream is read to
// its end, or cut after its first event when cut is set.
func post(t *testing.T, client *http.Client, base, key string, body map[string]any, cut bool) limitAnswer {
	b, _ := json.Marshal(body)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/chat/completions", bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := client.Do(req)
	if err != nil {
		t.Errorf("POST %s: %v", base, err)
		return limitAnswer{}
	}
	defer resp.Body.Close()
	a := limitAnswer{status: resp.StatusCode, header: resp.Header}
	if resp.StatusCode == http.StatusOK && cut {
		_, _ = bufio.NewReader(resp.Body).ReadString('\n')
		cancel() // the client goes away mid-stream
		return a
	}
	raw, _ := io.ReadAll(resp.Body)
	a.body = string(raw)
	var e struct {
		Error struct{ Type, Code string } `json:"error"`
	}
	if resp.StatusCode != http.StatusOK && json.Unmarshal(raw, &e) == nil {
		a.typ, a.code = e.Error.Type, e.Error.Code
	}
	return a
}

// burst sends n concurrent requests, alternating between the two
// gateway processes; cutEvery > 0 cuts every cutEvery-th stream.
func (g *limitedGateway) burst(t *testing.T, n int, key string, body func(i int) map[string]any, cutEvery int) []limitAnswer {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n, MaxConnsPerHost: n}, Timeout: time.Minute}
	out := make([]limitAnswer, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		base := g.gateway
		if i%2 == 1 {
			base = g.second
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = post(t, client, base, key, body(i), cutEvery > 0 && i%cutEvery == 0)
		}()
	}
	wg.Wait()
	return out
}

func countStatus(as []limitAnswer, status int, code string) int {
	n := 0
	for _, a := range as {
		if a.status == status && (code == "" || a.code == code) {
			n++
		}
	}
	return n
}

// eventsOfType counts the log's events of a type.
func (g *limitedGateway) eventsOfType(t *testing.T, typ string) int {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), g.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	var n int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM events WHERE event_type = $1`, typ).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestKeyRPMAcrossProcesses: a key with --rpm 3 gets exactly 3 answers
// from 20 concurrent requests spread over two gateway processes in one
// minute; the 17 refusals are 429 rate_limit_exceeded with Retry-After
// and OpenAI's rate-limit headers, reach no upstream and record nothing;
// the next minute admits again.
func TestKeyRPMAcrossProcesses(t *testing.T) {
	g := newLimitedGateway(t)
	k := g.mintLimited(t, "--rpm", "3")
	g.startOfMinute(t, 0)
	before := g.eventsOfType(t, "CompletionRecorded")
	as := g.burst(t, 20, k.Secret, func(i int) map[string]any {
		return map[string]any{"model": "gpt-4.1-nano", "messages": userMsg(fmt.Sprintf("rpm request %d", i))}
	}, 0)
	if ok, limited := countStatus(as, 200, ""), countStatus(as, 429, "rate_limit_exceeded"); ok != 3 || limited != 17 {
		for _, a := range as {
			t.Logf("%d %s", a.status, a.body)
		}
		t.Fatalf("20 concurrent requests with --rpm 3: %d answered, %d rate_limit_exceeded; want exactly 3 and 17", ok, limited)
	}
	for _, a := range as {
		h := a.header
		if h.Get("x-ratelimit-limit-requests") != "3" || h.Get("x-ratelimit-reset-requests") == "" {
			t.Errorf("%d without OpenAI's rate-limit headers: %v", a.status, h)
		}
		if a.status == 429 && (a.typ != "rate_limit_error" || h.Get("Retry-After") == "" || h.Get("x-ratelimit-remaining-requests") != "0") {
			t.Errorf("a refusal: type %q, Retry-After %q, remaining %q", a.typ, h.Get("Retry-After"), h.Get("x-ratelimit-remaining-requests"))
		}
	}
	if calls := g.up.Calls("gpt-4.1-nano"); calls != 3 {
		t.Errorf("the upstream was called %d times; want 3 (refusals reach no upstream)", calls)
	}
	if got := g.eventsOfType(t, "CompletionRecorded") - before; got != 3 {
		t.Errorf("%d completions recorded; want 3 (refusals record nothing)", got)
	}
	// The next minute admits three more.
	g.startOfMinute(t, 1)
	if a := post(t, http.DefaultClient, g.second, k.Secret, map[string]any{"model": "gpt-4.1-nano", "messages": userMsg("next minute")}, false); a.status != 200 ||
		a.header.Get("x-ratelimit-remaining-requests") != "2" {
		t.Fatalf("the next minute: %d remaining %q %s", a.status, a.header.Get("x-ratelimit-remaining-requests"), a.body)
	} else if limit, _ := strconv.Atoi(a.header.Get("X-RateLimit-Limit")); a.header.Get("X-RateLimit-Remaining") != strconv.Itoa(limit-4) {
		// The plan's daily quota counted the 4 answers, not the 17 refusals.
		t.Fatalf("the plan's daily quota after 4 answers and 17 refusals: %s of %d left", a.header.Get("X-RateLimit-Remaining"), limit)
	}
	g.tokensPerMinute(t)
}

// tokensPerMinute: a key's tokens per minute reserve each request's most
// tokens (its prompt bound plus max_tokens) and admit exactly what fits:
// with room for two and a half reservations, 2 of 20 concurrent requests
// while those two are in flight.
// `arr keys limits` changes the limit.
func (g *limitedGateway) tokensPerMinute(t *testing.T) {
	t.Helper()
	k := g.mintLimited(t, "--tpm", "100000", "--models", "nano")
	body := func(i int) map[string]any {
		return map[string]any{"model": "gpt-4.1-nano", "max_tokens": 10, "messages": userMsg(fmt.Sprintf("tpm request %02d", i))}
	}
	g.startOfMinute(t, 2)
	first := post(t, http.DefaultClient, g.gateway, k.Secret, body(0), false)
	left, err := strconv.Atoi(first.header.Get("x-ratelimit-remaining-tokens"))
	if first.status != 200 || err != nil || first.header.Get("x-ratelimit-limit-tokens") != "100000" {
		t.Fatalf("a request with --tpm 100000: %d %v %s", first.status, first.header, first.body)
	}
	reserved := 100000 - left
	tpm := 2*reserved + reserved/2
	var out map[string]any
	g.mustArr(&out, "keys", "limits", "--id", k.ID, "--tpm", strconv.Itoa(tpm), "--json")
	g.startOfMinute(t, 3)
	// The admitted requests stay in flight (holding their reservations)
	// while the others are decided; a request that ended would have
	// settled to its real, smaller, count.
	g.up.Set("", upstreamtest.Behavior{Latency: time.Second})
	defer g.up.Set("", upstreamtest.Behavior{})
	as := g.burst(t, 20, k.Secret, body, 0)
	if ok, limited := countStatus(as, 200, ""), countStatus(as, 429, "rate_limit_exceeded"); ok != 2 || limited != 18 {
		t.Fatalf("20 concurrent requests reserving %d tokens each with --tpm %d: %d answered, %d refused; want 2 and 18", reserved, tpm, ok, limited)
	}
	for _, a := range as {
		if a.header.Get("x-ratelimit-limit-tokens") != strconv.Itoa(tpm) || a.header.Get("x-ratelimit-reset-tokens") == "" {
			t.Fatalf("without the token headers: %v", a.header)
		}
	}
}

// keyListing is a key as `arr keys list --json` prints it.
type keyListing struct {
	ID     string `json:"id"`
	Limits struct {
		MaxBudgetUSD *float64 `json:"max_budget_usd"`
		RPM          *int64   `json:"rpm_limit"`
		TPM          *int64   `json:"tpm_limit"`
		Models       []string `json:"models"`
	} `json:"limits"`
	Spend *struct {
		SpentUSD    float64 `json:"spent_usd"`
		ReservedUSD float64 `json:"reserved_usd"`
	} `json:"spend"`
}

func (g *limitedGateway) listed(t *testing.T, id string) keyListing {
	t.Helper()
	var keys []keyListing
	g.mustArr(&keys, "keys", "list", "--email", limitedEmail, "--json")
	for _, k := range keys {
		if k.ID == id {
			return k
		}
	}
	t.Fatalf("key %s not in arr keys list", id)
	return keyListing{}
}

// TestKeyBudgetWithConcurrentStreams: waves of 64 concurrent streaming
// requests, over two gateway processes, some cut by their client, spend a
// key's budget; it is never exceeded (the documented overshoot is zero),
// what the counters settled is what the audit chain recorded, refusals
// are 429 budget_exceeded (type insufficient_quota) that reach no
// upstream, and 50% and 80% are recorded once and mailed.
func TestKeyBudgetWithConcurrentStreams(t *testing.T) {
	g := newLimitedGateway(t)
	g.up.Set("", upstreamtest.Behavior{ChunkDelay: 5 * time.Millisecond})
	const budget = 0.0005 // 500 micro-dollars: about 27 requests' reservations, about 160 requests' cost
	k := g.mintLimited(t, "--max-budget-usd", "0.0005", "--budget-period", "day", "--models", "nano")
	admitted, refused := 0, 0
	for wave := 0; wave < 40; wave++ {
		as := g.burst(t, 64, k.Secret, func(i int) map[string]any {
			return map[string]any{"model": "gpt-4.1-nano", "stream": true, "max_tokens": 16,
				"messages": userMsg(fmt.Sprintf("wave %d request %d", wave, i))}
		}, 8)
		ok, over := countStatus(as, 200, ""), countStatus(as, 429, "budget_exceeded")
		if ok+over != 64 {
			for _, a := range as {
				t.Logf("%d %s", a.status, a.body)
			}
			t.Fatalf("wave %d: %d answered and %d budget_exceeded of 64", wave, ok, over)
		}
		for _, a := range as {
			if a.status == 429 && (a.typ != "insufficient_quota" || a.header.Get("Retry-After") == "") {
				t.Fatalf("budget_exceeded: type %q Retry-After %q", a.typ, a.header.Get("Retry-After"))
			}
		}
		admitted, refused = admitted+ok, refused+over
		if spent := g.listed(t, k.ID).Spend; spent == nil || spent.SpentUSD > budget || spent.ReservedUSD != 0 {
			t.Fatalf("after wave %d: spend %+v of a $%v budget", wave, spent, budget)
		}
		if ok == 0 {
			break
		}
	}
	if admitted == 0 || refused == 0 {
		t.Fatalf("%d admitted, %d refused: the budget was not reached", admitted, refused)
	}
	spent := g.listed(t, k.ID).Spend
	t.Logf("%d streams admitted, %d refused; $%.6f spent of $%v", admitted, refused, spent.SpentUSD, budget)
	if calls := g.up.Calls("gpt-4.1-nano") + g.up.Calls("gemini-2.0-flash-lite"); calls != admitted {
		t.Errorf("%d upstream calls for %d admitted requests (refusals reach no upstream)", calls, admitted)
	}
	if got := g.eventsOfType(t, "CompletionRecorded"); got != admitted {
		t.Errorf("%d completions recorded for %d admitted", got, admitted)
	}
	g.checkUsageByKey(t, k, spent.SpentUSD)
	if n := g.eventsOfType(t, "BudgetThresholdCrossed"); n < 2 || n > 3 {
		t.Errorf("%d BudgetThresholdCrossed events; want 50%% and 80%% once (and 100%% at most once)", n)
	}
}

// checkUsageByKey: GET /v1/usage's by_key cost of the key is what its
// budget's counter settled (bounded wait for the usage read model).
func (g *limitedGateway) checkUsageByKey(t *testing.T, k mintedKey, spent float64) {
	t.Helper()
	var last string
	for i := 0; i < 50; i++ {
		_, body := get(t, g.gateway+"/v1/usage?days=1", map[string]string{"Authorization": "Bearer " + k.Secret})
		var u struct {
			ByKey map[string]struct {
				CostMicroUSD int64 `json:"cost_micro_usd"`
			} `json:"by_key"`
		}
		_ = json.Unmarshal(body, &u)
		if got := u.ByKey[k.ID].CostMicroUSD; got == int64(spent*1e6+0.5) {
			return
		}
		last = string(body)
		time.Sleep(100 * time.Millisecond)
	}
	t.Errorf("GET /v1/usage by_key never showed the key's settled spend $%.6f: %s", spent, last)
}

// TestKeyModelsExpiryPatchAndBudgetMail: a --models nano key asking for
// high is 403 model_not_allowed and auto stays in nano; PATCH
// /v1/me/keys/{id} appends KeyLimitsSet and both processes enforce the
// new limits from the next request (models cleared, rpm 1, then an expiry
// in the past: 401 key_expired); an account budget shared by its keys
// refuses with budget_exceeded; crossing 50% of a key's budget is mailed.
func TestKeyModelsExpiryPatchAndBudgetMail(t *testing.T) {
	mail := mailtest.Start(t, mailtest.Options{})
	g := newLimitedGateway(t, "SMTP_URL="+mail.URL, "ARR_MAIL_FROM=arr test <no-reply@arr.test>")
	k := g.mintLimited(t, "--models", "nano")
	ask := func(base, model string) limitAnswer {
		return post(t, http.DefaultClient, base, k.Secret, map[string]any{"model": model, "messages": userMsg("which tier? " + model)}, false)
	}
	for _, base := range []string{g.gateway, g.second} {
		if a := ask(base, "high"); a.status != 403 || a.code != "model_not_allowed" || a.typ != "permission_error" {
			t.Fatalf("a nano key asking for high: %d %s", a.status, a.body)
		}
	}
	for _, m := range []string{"o3", "claude-opus-4", "gemini-2.5-pro"} {
		if n := g.up.Calls(m); n != 0 {
			t.Fatalf("refused requests reached %s %d times", m, n)
		}
	}
	// The Responses route runs the same use case, under the same limits.
	resp := postKeyed(t, g.gateway+"/v1/responses", k.Secret, map[string]any{"model": "high", "input": "which tier?"})
	if resp.status != 403 || resp.code != "model_not_allowed" {
		t.Fatalf("a nano key asking /v1/responses for high: %d %s", resp.status, resp.body)
	}
	if a := ask(g.second, "auto"); a.status != 200 || !strings.Contains(a.body, `"tier":"nano"`) {
		t.Fatalf("auto with a nano key: %d %s", a.status, a.body)
	}

	// The owner changes the key's limits on the JSON API.
	w := newWeb(t)
	signIn(t, w, mail, g.gateway, limitedEmail)
	var me meBody
	w.json(http.MethodGet, g.gateway+"/v1/me", nil, nil, &me)
	hdr := map[string]string{"X-CSRF-Token": me.CSRFToken}
	before := g.eventsOfType(t, "KeyLimitsSet")
	var patched map[string]any
	// A cross-site PATCH (the session cookie, no CSRF token) changes nothing.
	if code := w.json(http.MethodPatch, g.gateway+"/v1/me/keys/"+k.ID, map[string]any{"models": nil}, nil, &patched); code != 403 {
		t.Fatalf("PATCH without the CSRF token: %d %v; want 403", code, patched)
	}
	if got := g.eventsOfType(t, "KeyLimitsSet") - before; got != 0 {
		t.Fatalf("a PATCH without the CSRF token appended %d KeyLimitsSet events", got)
	}
	if code := w.json(http.MethodPatch, g.gateway+"/v1/me/keys/"+k.ID, map[string]any{"models": nil, "rpm_limit": 1}, hdr, &patched); code != 200 ||
		patched["models"] != nil || patched["rpm_limit"] != float64(1) {
		t.Fatalf("PATCH models null, rpm_limit 1: %d %v", code, patched)
	}
	if got := g.eventsOfType(t, "KeyLimitsSet") - before; got != 1 {
		t.Fatalf("%d KeyLimitsSet events appended by the PATCH; want 1", got)
	}
	if code := w.json(http.MethodPatch, g.gateway+"/v1/me/keys/"+k.ID, map[string]any{"rpm_limit": "many"}, hdr, &patched); code != 400 {
		t.Fatalf("PATCH with a bad rpm_limit: %d", code)
	}
	g.startOfMinute(t, 0)
	if a := ask(g.second, "high"); a.status != 200 || a.header.Get("x-ratelimit-limit-requests") != "1" {
		t.Fatalf("high after the models were cleared, on the other process: %d %v %s", a.status, a.header, a.body)
	}
	if a := ask(g.gateway, "high"); a.status != 429 || a.code != "rate_limit_exceeded" {
		t.Fatalf("a second request with rpm_limit 1: %d %s", a.status, a.body)
	}
	if code := w.json(http.MethodPatch, g.gateway+"/v1/me/keys/"+k.ID, map[string]any{"expires_at": "2020-01-01T00:00:00Z"}, hdr, &patched); code != 200 {
		t.Fatalf("PATCH expires_at: %d %v", code, patched)
	}
	for _, base := range []string{g.gateway, g.second} {
		if a := ask(base, "nano"); a.status != 401 || a.code != "key_expired" {
			t.Fatalf("an expired key: %d %s", a.status, a.body)
		}
	}
	var list struct {
		Data []map[string]any `json:"data"`
	}
	if code := w.json(http.MethodGet, g.gateway+"/v1/me/keys", nil, nil, &list); code != 200 || len(list.Data) == 0 || list.Data[0]["expires_at"] != "2020-01-01T00:00:00Z" {
		t.Fatalf("GET /v1/me/keys: %d %v", code, list)
	}

	// The account page's key form sets limits too, and the page lists them.
	form := w.get(g.gateway + "/account")
	minted := w.post(g.gateway+"/account/keys", url.Values{"csrf_token": {hidden(t, form, "csrf_token")}, "name": {"page"},
		"max_budget_usd": {"5"}, "budget_period": {"week"}, "rpm_limit": {"10"}, "models": {"nano"}})
	mustStatus(t, "POST /account/keys with limits", minted, 201)
	if !strings.Contains(minted.body, "$5.00/week, 10 rpm, models nano") || !strings.Contains(minted.body, "$0.00 of $5.00 this week") {
		t.Fatalf("the account page does not list the new key's limits and spend:\n%s", minted.body)
	}
	bad := w.post(g.gateway+"/account/keys", url.Values{"csrf_token": {hidden(t, form, "csrf_token")}, "models": {"gpt-9"}})
	mustStatus(t, "POST /account/keys with an unknown model", bad, 400)

	g.budgetMail(t, mail)
}

// budgetMail: a key's budget whose 50% a few requests cross mails the
// account once; an account budget its keys share refuses what would pass
// it.
func (g *limitedGateway) budgetMail(t *testing.T, mail *mailtest.Server) {
	t.Helper()
	k := g.mintLimited(t, "--max-budget-usd", "0.0001", "--budget-period", "week", "--models", "nano")
	long := strings.Repeat("budget ", 60)
	var last limitAnswer
	for i := 0; i < 20; i++ {
		last = post(t, http.DefaultClient, g.gateway, k.Secret, map[string]any{"model": "gpt-4.1-nano", "max_tokens": 4, "messages": userMsg(fmt.Sprint(long, i))}, false)
		if last.status != 200 {
			break
		}
	}
	if last.status != 429 || last.code != "budget_exceeded" {
		t.Fatalf("spending a $0.0001 budget: %d %s", last.status, last.body)
	}
	if n := g.eventsOfType(t, "BudgetThresholdCrossed"); n != 1 {
		out, _, _ := g.arr("keys", "list", "--email", limitedEmail)
		t.Fatalf("%d BudgetThresholdCrossed events after crossing 50%% of a budget; want 1\n%s\n%s", n, out, g.proc.logs.String())
	}
	if m := mail.Next(t); !strings.Contains(m.Subject, "50%") || m.To[0] != limitedEmail {
		t.Fatalf("the threshold mail: %q to %v", m.Subject, m.To)
	}
	if k := g.listed(t, k.ID); k.Spend == nil || k.Spend.SpentUSD > 0.0001 || k.Spend.SpentUSD < 0.00005 {
		t.Fatalf("arr keys list: %+v", k)
	}

	var b map[string]any
	g.mustArr(&b, "accounts", "budget", "--email", limitedEmail, "--max-budget-usd", "0.00004", "--budget-period", "month", "--json")
	free := g.mintLimited(t)
	a := post(t, http.DefaultClient, g.second, free.Secret, map[string]any{"model": "gpt-4.1-nano", "max_tokens": 400, "messages": userMsg("over the account's budget")}, false)
	if a.status != 429 || a.code != "budget_exceeded" || !strings.Contains(a.body, "the account") {
		t.Fatalf("a key of an account whose shared budget cannot cover the request: %d %s", a.status, a.body)
	}
}

// postKeyed posts body with key and reads the answer.
func postKeyed(t *testing.T, url, key string, body any) limitAnswer {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	a := limitAnswer{status: resp.StatusCode, header: resp.Header, body: string(raw)}
	var e struct {
		Error struct{ Type, Code string } `json:"error"`
	}
	if json.Unmarshal(raw, &e) == nil {
		a.typ, a.code = e.Error.Type, e.Error.Code
	}
	return a
}
