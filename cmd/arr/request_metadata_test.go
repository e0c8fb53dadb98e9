package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stripe/stripe-go/v85/webhook"

	"github.com/arr-dev/arr/commands"
)

// TestRequestIDReachesEventMetadata: every HTTP path that appends gives
// the events it appends the X-Request-Id the caller sent, as both the
// request id and the correlation id, and the actor it acted for.
func TestRequestIDReachesEventMetadata(t *testing.T) {
	e, _ := billingEnv(t)
	pool, st := openStore(t, e.dbURL)
	cmds, err := commands.New(st, time.Now, nil)
	if err != nil {
		t.Fatal(err)
	}
	token, accountID := session(t, pool, cmds, "metadata@example.com")
	cookie := map[string]string{"Cookie": "arr_session=" + token, "X-CSRF-Token": csrfFor(token)}

	// send makes one request with a fresh X-Request-Id and returns it.
	send := func(t *testing.T, method, url, contentType string, body []byte, headers map[string]string) (string, []byte) {
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
		client := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
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
	// last is the metadata of the newest event of a type.
	last := func(t *testing.T, eventType string) (requestID, correlationID, actor string) {
		t.Helper()
		err := pool.QueryRow(context.Background(), `SELECT coalesce(request_id, ''), coalesce(correlation_id, ''), coalesce(actor, '')
			FROM events WHERE event_type = $1 ORDER BY position DESC LIMIT 1`, eventType).Scan(&requestID, &correlationID, &actor)
		if err != nil {
			t.Fatalf("reading the last %s: %v", eventType, err)
		}
		return requestID, correlationID, actor
	}
	check := func(t *testing.T, eventType, rid, actorPrefix string) {
		t.Helper()
		req, corr, actor := last(t, eventType)
		if req != rid || corr != rid {
			t.Errorf("%s: request_id %q, correlation_id %q; want both %q (the request's X-Request-Id)", eventType, req, corr, rid)
		}
		if !strings.HasPrefix(actor, actorPrefix) {
			t.Errorf("%s: actor %q; want %s…", eventType, actor, actorPrefix)
		}
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
}
