package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stripe/stripe-go/v85/webhook"

	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/commands/research/researchtest"
)

// TestRequestIDReachesEventMetadata: every HTTP path that appends gives
// the events it appends the X-Request-Id the caller sent, as both the
// request id and the correlation id, and the actor it acted for.
func TestRequestIDReachesEventMetadata(t *testing.T) {
	e, _ := billingEnv(t)
	pool, st := openStore(t, e.dbURL)
	cmds, err := commands.New(commands.Config{Store: st, Clock: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	token, accountID := session(t, pool, cmds, "metadata@example.com")
	cookie := map[string]string{"Cookie": "arr_session=" + token, "X-CSRF-Token": csrfFor(token)}

	send := func(t *testing.T, method, url, contentType string, body []byte, headers map[string]string) (string, []byte) {
		t.Helper()
		return sendWithRequestID(t, method, url, contentType, body, headers)
	}
	check := func(t *testing.T, eventType, rid, actorPrefix string) {
		t.Helper()
		checkEventMetadata(t, pool, eventType, rid, actorPrefix)
	}

	gw, rec := e.base("gateway"), e.base("records")
	var keyID string
	t.Run("gateway POST /v1/me/keys", func(t *testing.T) {
		rid, raw := send(t, http.MethodPost, gw+"/v1/me/keys", "application/json", []byte(`{"name":"meta"}`), cookie)
		check(t, "KeyIssued", rid, "session:")
		var k struct{ ID string }
		if err := json.Unmarshal(raw, &k); err != nil || k.ID == "" {
			t.Fatalf("minted key: %q (%v)", raw, err)
		}
		keyID = k.ID
	})
	t.Run("gateway DELETE /v1/me/keys/{id}", func(t *testing.T) {
		rid, _ := send(t, http.MethodDelete, gw+"/v1/me/keys/"+keyID, "", nil, cookie)
		check(t, "KeyRevoked", rid, "session:")
	})
	t.Run("gateway POST /v1/stripe/webhook", func(t *testing.T) {
		body := fmt.Appendf(nil, `{"id":"evt_meta","object":"event","api_version":"2026-03-25.dahlia","created":%d,"type":"checkout.session.completed","data":{"object":{"id":"cs_meta","object":"checkout.session","mode":"subscription","payment_status":"paid","client_reference_id":%q,"customer":"cus_meta","subscription":"sub_meta","metadata":{"plan":"pro","account_id":%q}}}}`,
			time.Now().Unix(), accountID, accountID)
		sig := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: body, Secret: e2eWebhookSecret}).Header
		rid, _ := send(t, http.MethodPost, gw+"/v1/stripe/webhook", "application/json", body, map[string]string{"Stripe-Signature": sig})
		check(t, "PlanChanged", rid, "stripe")
	})
	t.Run("records POST /account/lists", func(t *testing.T) {
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		_ = mw.WriteField("name", "meta list")
		fw, _ := mw.CreateFormFile("file", "meta.csv")
		_, _ = fw.Write([]byte("apn,address,phone\n123,1 Main St,(410) 555-0142\n"))
		_ = mw.Close()
		rid, _ := send(t, http.MethodPost, rec+"/account/lists", mw.FormDataContentType(), buf.Bytes(), cookie)
		check(t, "ListImported", rid, "session:")
	})
	t.Run("records POST /account/contact-data/erase", func(t *testing.T) {
		rid, _ := send(t, http.MethodPost, rec+"/account/contact-data/erase", "application/x-www-form-urlencoded", nil, cookie)
		check(t, "ContactDataErased", rid, "session:")
	})
	form := "application/x-www-form-urlencoded"
	t.Run("account page POST /account/keys", func(t *testing.T) {
		rid, _ := send(t, http.MethodPost, gw+"/account/keys", form, []byte("name=page"), cookie)
		check(t, "KeyIssued", rid, "session:")
	})
	t.Run("account page POST /account/signout", func(t *testing.T) {
		rid, _ := send(t, http.MethodPost, gw+"/account/signout", form, nil, cookie)
		check(t, "SessionEnded", rid, "session:")
	})
}

// sendWithRequestID makes one request with a fresh X-Request-Id, fails
// the test on a status of 400 or more, and returns the id and the body.
func sendWithRequestID(t *testing.T, method, url, contentType string, body []byte, headers map[string]string) (string, []byte) {
	t.Helper()
	rid := "meta-" + uuid.NewString()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("X-Request-Id", rid)
	client := &http.Client{Timeout: 60 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 400 {
		t.Fatalf("%s %s: %d %s", method, url, resp.StatusCode, raw)
	}
	return rid, raw
}

// checkEventMetadata waits (at most 10s: some appends are batched) for an
// event of eventType with request id rid and fails unless its correlation
// id is rid too and its actor starts with actorPrefix.
func checkEventMetadata(t *testing.T, pool *pgxpool.Pool, eventType, rid, actorPrefix string) {
	t.Helper()
	var req, corr, actor string
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := pool.QueryRow(context.Background(), `SELECT coalesce(request_id, ''), coalesce(correlation_id, ''), coalesce(actor, '')
			FROM events WHERE event_type = $1 ORDER BY position DESC LIMIT 1`, eventType).Scan(&req, &corr, &actor)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			t.Fatalf("reading the last %s: %v", eventType, err)
		}
		if req == rid || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if req != rid || corr != rid {
		t.Errorf("%s: request_id %q, correlation_id %q; want both %q (the request's X-Request-Id)", eventType, req, corr, rid)
	}
	if !strings.HasPrefix(actor, actorPrefix) {
		t.Errorf("%s: actor %q; want %s…", eventType, actor, actorPrefix)
	}
}

// TestRequestIDReachesEventMetadataKeyed: the keyed paths that append —
// a chat completion (its audit entry), feedback on it, and an answer the
// answer service synthesizes — carry the caller's X-Request-Id too.
func TestRequestIDReachesEventMetadataKeyed(t *testing.T) {
	web := researchtest.NewWeb(t)
	sx := researchtest.NewSearXNG(t, web)
	model := researchtest.NewLLM(t)
	g := newGateway(t, "pro", "ARR_SEARCH=searxng", "SEARXNG_URL="+sx.URL, "ARR_ANSWER_LLM_BASE_URL="+model.BaseURL(),
		"ARR_ANSWER_LLM_API_KEY=standin", "ARR_ANSWER_FETCH_PRIVATE=allow", "ARR_ANSWER_SEED=off")
	pool, _ := openStore(t, g.dbURL)
	keyed := map[string]string{"Authorization": "Bearer " + g.key}

	var hash string
	t.Run("gateway POST /v1/chat/completions", func(t *testing.T) {
		body, _ := json.Marshal(map[string]any{"model": "auto", "messages": userMsg("Say hello.")})
		rid, raw := sendWithRequestID(t, http.MethodPost, g.gateway+"/v1/chat/completions", "application/json", body, keyed)
		var out map[string]any
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("completion: %q", raw)
		}
		hash, _ = routingOf(t, out)["audit_hash"].(string)
		checkEventMetadata(t, pool, "CompletionRecorded", rid, "key:")
	})
	t.Run("gateway POST /v1/feedback", func(t *testing.T) {
		body, _ := json.Marshal(map[string]any{"audit_hash": hash, "rating": 5})
		rid, _ := sendWithRequestID(t, http.MethodPost, g.gateway+"/v1/feedback", "application/json", body, keyed)
		checkEventMetadata(t, pool, "FeedbackSubmitted", rid, "key:")
	})
	t.Run("answer GET /api/v1/answer", func(t *testing.T) {
		k := g.mint("gw-pro@example.com", "answer")
		rid, _ := sendWithRequestID(t, http.MethodGet, g.base("answer")+"/api/v1/answer?q=what+causes+tides", "", nil,
			map[string]string{"Authorization": "Bearer " + k.Secret})
		checkEventMetadata(t, pool, "AnswerSynthesized", rid, "key:")
	})
}
