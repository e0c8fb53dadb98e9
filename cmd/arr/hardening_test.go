package main_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/adapters/mail/mailtest"
	"github.com/arr-dev/arr/adapters/upstream/upstreamtest"
)

// Every request in these tests goes to the arr the test started on
// 127.0.0.1 (forged Host headers only say otherwise).

// testPool opens the test's database for the checks a user cannot make
// over HTTP (the log head) and for switching failures on and off.
func testPool(t *testing.T, e *env) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), e.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

func logHead(t *testing.T, pool *pgxpool.Pool) int64 {
	t.Helper()
	var head int64
	if err := pool.QueryRow(context.Background(), `SELECT position FROM event_log_head`).Scan(&head); err != nil {
		t.Fatal(err)
	}
	return head
}

// backgroundEvents are the types arr appends on its own while a test runs:
// the usage meter's counts of requests served earlier and the local index's
// seeding.
var backgroundEvents = []string{"CallsCounted", "DocumentIndexed"}

// appendedSince lists the types of the events after position pos, but for
// backgroundEvents.
func appendedSince(t *testing.T, pool *pgxpool.Pool, pos int64) []string {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT event_type FROM events WHERE position > $1 AND NOT event_type = ANY($2) ORDER BY position`, pos, backgroundEvents)
	if err != nil {
		t.Fatal(err)
	}
	types, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return types
}

type healthBody struct {
	Status      string   `json:"status"`
	Problems    []string `json:"problems"`
	Projections map[string]struct {
		Position     int64   `json:"position"`
		LagEvents    int64   `json:"lag_events"`
		Parked       int64   `json:"parked_events"`
		FailingSince *string `json:"failing_since"`
	} `json:"projections"`
}

func health(t *testing.T, base string) (int, healthBody) {
	t.Helper()
	code, raw := get(t, base+"/healthz", nil)
	var h healthBody
	if err := json.Unmarshal(raw, &h); err != nil {
		t.Fatalf("/healthz: %d %q: %v", code, raw, err)
	}
	return code, h
}

type errBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Field   string `json:"field"`
		Param   string `json:"param"`
	} `json:"error"`
}

func errorCode(t *testing.T, raw []byte) string {
	t.Helper()
	var b errBody
	if err := json.Unmarshal(raw, &b); err != nil {
		t.Fatalf("error body %q is not JSON: %v", raw, err)
	}
	return b.Error.Code
}

// TestHostileRequestsBreakNothing sends the requests that used to stop a
// read model for every tenant, read another tenant's audit data or mail a
// sign-in link to a foreign host, then checks that arr still serves
// everyone: nothing was appended, no projection lags or parked anything,
// new requests succeed, a revoked key fails, another account's audit entry
// shows no tenant data and no link names the forged host.
func TestHostileRequestsBreakNothing(t *testing.T) {
	mail := mailtest.Start(t, mailtest.Options{})
	up := upstreamtest.Start(t)
	e := newEnv(t)
	e.extraEnv = append(e.extraEnv, "SMTP_URL="+mail.URL, "ARR_ANSWER_LLM_BASE_URL=http://127.0.0.1:1/v1",
		"ARR_UPSTREAM_BASE_URL="+up.URL, "ARR_UPSTREAM_API_KEY=sk-test-upstream", "ARR_UPSTREAM_TIMEOUT=2s")
	e.up()
	pool := testPool(t, e)
	e.createAccount("alice@example.com", "free")
	e.createAccount("bob@example.com", "free")
	aliceAnswer := e.mint("alice@example.com", "answer").Secret
	aliceGW := e.mint("alice@example.com", "gateway")
	bobGW := e.mint("bob@example.com", "gateway").Secret

	// Alice's completion, whose audit entry Bob will try to read.
	g := &gw{env: e, up: up, key: aliceGW.Secret}
	code, _, body := g.chat(t, map[string]any{"model": "auto", "messages": userMsg("what is a hash chain?")})
	if code != http.StatusOK {
		t.Fatalf("alice's completion: %d %v", code, body)
	}
	hash, _ := routingOf(t, body)["audit_hash"].(string)

	web := newWeb(t)
	signIn(t, web, mail, e.gateway, "carol@example.com")
	var me meBody
	if st := web.json(http.MethodGet, e.gateway+"/v1/me", nil, nil, &me); st != http.StatusOK {
		t.Fatalf("GET /v1/me: %d", st)
	}
	listFile := filepath.Join(t.TempDir(), "nul.csv")
	if err := os.WriteFile(listFile, []byte("apn,address\n123,1 Main\x00 St\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	before := logHead(t, pool)
	t.Run("NUL text is refused with a 400 naming the field and appends nothing", func(t *testing.T) {
		code, raw := get(t, e.answer+"/api/v1/answer?q=what%00is+arr", map[string]string{"Authorization": "Bearer " + aliceAnswer})
		if code != http.StatusBadRequest || errorCode(t, raw) != "q_control_character" {
			t.Fatalf("GET answer with a NUL: %d %s", code, raw)
		}
		st, _, a := askAnswer(t, http.MethodPost, e.answer, aliceAnswer, map[string]string{"q": "what\x00is arr"})
		if st != http.StatusBadRequest || a.Error == nil || a.Error.Code != "q_control_character" || a.Error.Field != "q" {
			t.Fatalf("POST answer with a NUL: %d %+v", st, a.Error)
		}
		var eb errBody
		st = web.json(http.MethodPost, e.gateway+"/v1/me/keys", map[string]string{"name": "bad\x00name"}, map[string]string{"X-CSRF-Token": me.CSRFToken}, &eb)
		if st != http.StatusBadRequest || eb.Error.Code != "name_control_character" {
			t.Fatalf("minting a key named with a NUL: %d %+v", st, eb.Error)
		}
		out, errs, exit := e.arr("import", "list", "--email", "alice@example.com", listFile)
		if exit != 2 || !strings.Contains(errs, "address_control_character") || !strings.Contains(errs, "line 2") {
			t.Fatalf("importing a list with a NUL cell: exit %d\n%s%s", exit, out, errs)
		}
		if got := appendedSince(t, pool, before); len(got) > 0 {
			t.Fatalf("the refused requests appended events: %v", got)
		}
	})

	t.Run("another tenant's audit entry shows no tenant data", func(t *testing.T) {
		for who, headers := range map[string]map[string]string{"no key": nil, "bob's key": {"Authorization": "Bearer " + bobGW}} {
			code, raw := get(t, e.gateway+"/v1/audit/"+hash, headers)
			if code != http.StatusOK {
				t.Fatalf("%s: %d %s", who, code, raw)
			}
			for _, field := range []string{"account_id", "key_id", "request_id", "model", "prompt_tokens", "cost_micro_usd", `"payload"`} {
				if strings.Contains(string(raw), field) {
					t.Fatalf("%s reads %s of alice's entry: %s", who, field, raw)
				}
			}
		}
		code, raw := get(t, e.gateway+"/v1/audit/"+hash, g.owner())
		if code != http.StatusOK || !strings.Contains(string(raw), `"account_id"`) {
			t.Fatalf("alice cannot read her own entry: %d %s", code, raw)
		}
	})

	t.Run("a sign-in under a forged Host gets no link", func(t *testing.T) {
		form := web.get(e.gateway + "/account")
		p := web.forge(http.MethodPost, e.gateway+"/account/signin", "evil.example", map[string]string{"X-Forwarded-Host": "evil.example", "X-Forwarded-Proto": "https"},
			url.Values{"email": {"dave@example.com"}, "csrf_token": {hidden(t, form, "csrf_token")}})
		if p.status != http.StatusMisdirectedRequest {
			t.Fatalf("sign-in with Host evil.example: %d", p.status)
		}
		noMail(t, mail, "a sign-in under a forged Host")
	})

	t.Run("arr still serves everyone", func(t *testing.T) {
		deadline := time.Now().Add(20 * time.Second)
		for {
			out, _, exit := e.arr("projections", "status", "--json", "--sample", "0s")
			var st struct {
				Projections []projectionStatusJSON `json:"projections"`
			}
			_ = json.Unmarshal([]byte(out), &st)
			lagging := []string{}
			for _, p := range st.Projections {
				if p.LagEvents > 0 {
					lagging = append(lagging, p.Name)
				}
			}
			if exit == 0 && len(st.Projections) > 0 && len(lagging) == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("projections lag after 20s: %v\n%s", lagging, out)
			}
			time.Sleep(100 * time.Millisecond)
		}
		var parked struct {
			Parked []json.RawMessage `json:"parked"`
		}
		e.mustArr(&parked, "projections", "parked", "--json")
		if len(parked.Parked) != 0 {
			t.Fatalf("parked events: %s", parked.Parked)
		}
		for _, base := range []string{e.answer, e.gateway, e.records} {
			if code, h := health(t, base); code != http.StatusOK || h.Status != "ok" || len(h.Problems) != 0 {
				t.Fatalf("%s/healthz: %d %+v", base, code, h)
			}
		}
		if st, _, a := askAnswer(t, http.MethodGet, e.answer, aliceAnswer, map[string]string{"q": "How do I revoke an API key?"}); st != http.StatusOK {
			t.Fatalf("a new question: %d %+v", st, a.Error)
		}
		bob := &gw{env: e, up: up, key: bobGW}
		if code, _, body := bob.chat(t, map[string]any{"model": "auto", "messages": userMsg("and what is a Merkle tree?")}); code != http.StatusOK {
			t.Fatalf("bob's completion: %d %v", code, body)
		}
		var minted map[string]any
		if st := web.json(http.MethodPost, e.gateway+"/v1/me/keys", map[string]string{"name": "good name"}, map[string]string{"X-CSRF-Token": me.CSRFToken}, &minted); st != http.StatusCreated {
			t.Fatalf("minting a key: %d %v", st, minted)
		}
		e.mustArr(nil, "keys", "revoke", "--id", aliceGW.ID, "--json")
		if code, _, body := g.chat(t, map[string]any{"model": "auto", "messages": userMsg("still there?")}); code != http.StatusUnauthorized {
			t.Fatalf("alice's revoked key: %d %v", code, body)
		}
	})
}

type projectionStatusJSON struct {
	Name      string `json:"name"`
	Position  int64  `json:"position"`
	LagEvents int64  `json:"lag_events"`
}

type parkedJSON struct {
	Projection string `json:"projection"`
	Position   int64  `json:"position"`
	EventType  string `json:"event_type"`
	Error      string `json:"error"`
}

func parkedOf(t *testing.T, e *env, projection string) []parkedJSON {
	t.Helper()
	var out struct {
		Parked []parkedJSON `json:"parked"`
	}
	args := []string{"projections", "parked", "--json"}
	if projection != "" {
		args = append(args, projection)
	}
	e.mustArr(&out, args...)
	return out.Parked
}

func checkpointOf(t *testing.T, pool *pgxpool.Pool, name string) int64 {
	t.Helper()
	var pos int64
	if err := pool.QueryRow(context.Background(), `SELECT position FROM projection_checkpoints WHERE name = $1`, name).Scan(&pos); err != nil {
		t.Fatal(err)
	}
	return pos
}

// TestParkedEventSurvivesKill: an event the lists projection cannot apply
// (a trigger the test adds refuses one list's name: a real PostgreSQL
// error, which the test later switches off) is parked after its retries;
// the projection moves on, /healthz and /metrics name it. After kill -9
// and a restart it is still listed and the projection is past it; once the
// failure is switched off, `arr projections retry lists` applies it.
func TestParkedEventSurvivesKill(t *testing.T) {
	e := newEnv(t)
	e.extraEnv = append(e.extraEnv, "ARR_MASTER_KEY="+testMasterKey)
	p := e.up()
	pool := testPool(t, e)
	e.createAccount("lists@example.com", "free")
	key := e.mint("lists@example.com", "records").Secret
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `
		CREATE FUNCTION public.refuse_poison_list() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF NEW.name = 'poison' THEN RAISE EXCEPTION 'test: lists named poison are refused'; END IF;
			RETURN NEW;
		END $$;
		CREATE TRIGGER refuse_poison BEFORE INSERT ON rm_lists.lists FOR EACH ROW EXECUTE FUNCTION public.refuse_poison_list();`); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "leads.csv")
	if err := os.WriteFile(file, []byte("apn,address\n123,1 Main St\n456,2 Main St\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var poison struct {
		ListID   string `json:"list_id"`
		Position int64  `json:"position"`
	}
	e.mustArr(&poison, "import", "list", "--email", "lists@example.com", file, "--name", "poison", "--json")

	var parked []parkedJSON
	eventually(t, 20*time.Second, "the poison event parked", func() bool {
		parked = parkedOf(t, e, "lists")
		return len(parked) == 1
	})
	if parked[0].Projection != "lists" || parked[0].EventType != "ListImported" || !strings.Contains(parked[0].Error, "lists named poison are refused") {
		t.Fatalf("parked = %+v", parked)
	}
	code, h := health(t, e.records)
	if code != http.StatusOK || h.Status != "degraded" || len(h.Problems) == 0 || !strings.Contains(strings.Join(h.Problems, "\n"), "projection lists parked 1 event") {
		t.Fatalf("/healthz with a parked event: %d %+v", code, h)
	}
	_, metrics := get(t, e.records+"/metrics", nil)
	if !strings.Contains(string(metrics), `arr_projection_parked_events{projection="lists"} 1`) {
		t.Fatalf("/metrics does not count the parked event")
	}
	// The projection moved on: a later list is served.
	var fine struct {
		ListID string `json:"list_id"`
	}
	e.mustArr(&fine, "import", "list", "--email", "lists@example.com", file, "--name", "fine", "--json")
	lists := func() string {
		code, raw := get(t, e.records+"/api/v1/lists", map[string]string{"Authorization": "Bearer " + key})
		if code != http.StatusOK {
			t.Fatalf("GET /api/v1/lists: %d %s", code, raw)
		}
		return string(raw)
	}
	if got := lists(); !strings.Contains(got, fine.ListID) || strings.Contains(got, poison.ListID) {
		t.Fatalf("lists after parking: %s", got)
	}

	p.kill()
	e.up()
	if got := parkedOf(t, e, "lists"); len(got) != 1 || got[0].Position != parked[0].Position {
		t.Fatalf("after kill -9 and a restart parked = %+v, want %+v", got, parked)
	}
	if cp := checkpointOf(t, pool, "lists"); cp < parked[0].Position {
		t.Fatalf("after a restart the lists checkpoint is %d, not past the parked event at %d", cp, parked[0].Position)
	}
	if _, h := health(t, e.records); h.Status != "degraded" {
		t.Fatalf("/healthz after a restart: %+v", h)
	}

	// While the failure persists, a retry leaves it parked and says so.
	if _, errs, exit := e.arr("projections", "retry", "lists"); exit != 1 || !strings.Contains(errs, "still fail") {
		t.Fatalf("retry with the failure on: exit %d %s", exit, errs)
	}
	if _, err := pool.Exec(ctx, `DROP TRIGGER refuse_poison ON rm_lists.lists`); err != nil {
		t.Fatal(err)
	}
	var res struct {
		Applied     int64             `json:"applied"`
		StillParked int64             `json:"still_parked"`
		Failing     []json.RawMessage `json:"failing"`
	}
	e.mustArr(&res, "projections", "retry", "lists", "--json")
	if res.Applied != 1 || res.StillParked != 0 || len(res.Failing) != 0 {
		t.Fatalf("retry = %+v", res)
	}
	if got := lists(); !strings.Contains(got, poison.ListID) {
		t.Fatalf("the retried list is not served: %s", got)
	}
	if got := parkedOf(t, e, "lists"); len(got) != 0 {
		t.Fatalf("parked after the retry: %+v", got)
	}
	if _, h := health(t, e.records); h.Status != "ok" {
		t.Fatalf("/healthz after the retry: %+v", h)
	}
}

// TestRevokedKeyNeverWorksWhileIdentityIsStuck: while the identity
// projection cannot apply a revocation (a trigger the test adds refuses
// it), keyed requests are refused with 503 and Retry-After rather than
// answered from a read model that still holds the key; once it can, the
// revoked key fails with 401 and the others work again.
func TestRevokedKeyNeverWorksWhileIdentityIsStuck(t *testing.T) {
	e := newEnv(t)
	e.up()
	pool := testPool(t, e)
	e.createAccount("stuck@example.com", "free")
	revoked := e.mint("stuck@example.com", "gateway")
	other := e.mint("stuck@example.com", "gateway").Secret
	auth := func(secret string) map[string]string { return map[string]string{"Authorization": "Bearer " + secret} }
	if code, raw := get(t, e.gateway+"/v1/key", auth(revoked.Secret)); code != http.StatusOK {
		t.Fatalf("a fresh key: %d %s", code, raw)
	}
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `
		CREATE FUNCTION public.refuse_revocation() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN RAISE EXCEPTION 'test: revocations are refused'; END $$;
		CREATE TRIGGER refuse_revocation BEFORE UPDATE ON rm_identity.api_keys FOR EACH ROW EXECUTE FUNCTION public.refuse_revocation();`); err != nil {
		t.Fatal(err)
	}
	out, errs, exit := e.arr("keys", "revoke", "--id", revoked.ID, "--json")
	if exit == 0 {
		t.Fatalf("revoking while identity cannot apply it reported success: %s", out)
	}
	_ = errs
	for _, secret := range []string{revoked.Secret, other} {
		req, _ := http.NewRequest(http.MethodGet, e.gateway+"/v1/key", nil)
		req.Header.Set("Authorization", "Bearer "+secret)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
			t.Fatalf("a key while identity is stuck: %d (Retry-After %q), want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
		}
	}
	code, h := health(t, e.gateway)
	if h.Status != "degraded" || !strings.Contains(strings.Join(h.Problems, "\n"), "projection identity cannot apply") {
		t.Fatalf("/healthz while identity is stuck: %d %+v", code, h)
	}
	if parked := parkedOf(t, e, ""); len(parked) != 0 {
		t.Fatalf("identity parked an event: %+v", parked)
	}

	if _, err := pool.Exec(ctx, `DROP TRIGGER refuse_revocation ON rm_identity.api_keys`); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the revocation applied", func() bool {
		code, _ := get(t, e.gateway+"/v1/key", auth(revoked.Secret))
		return code == http.StatusUnauthorized
	})
	if code, raw := get(t, e.gateway+"/v1/key", auth(other)); code != http.StatusOK {
		t.Fatalf("the other key after identity recovered: %d %s", code, raw)
	}
	if _, h := health(t, e.gateway); h.Status != "ok" {
		t.Fatalf("/healthz after identity recovered: %+v", h)
	}
}
