package main_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain/audit"
	"github.com/arr-dev/arr/eventstore"
)

// e2eAuditorKey is the operator's auditor key in these tests.
const e2eAuditorKey = "auditor-e2e-7f3c9a41d2b86e05c4f1a9d3b7e2c8a6"

// auditView is GET /v1/audit/{hash} as a test reads it: Payload is kept
// as the exact bytes sent, to check payload_sha256.
type auditView struct {
	View          string          `json:"view"`
	Hash          string          `json:"hash"`
	PrevHash      string          `json:"prev_hash"`
	NextHash      string          `json:"next_hash"`
	PayloadSHA256 string          `json:"payload_sha256"`
	Payload       json.RawMessage `json:"payload"`
	Verified      bool            `json:"verified"`
	Chain         struct {
		Link             int               `json:"link"`
		PublicVerifiable bool              `json:"public_verifiable"`
		Algorithms       map[string]string `json:"algorithms"`
	} `json:"chain"`
}

func getAudit(t *testing.T, base, hash string, headers map[string]string) (auditView, []byte) {
	t.Helper()
	code, body := get(t, base+"/v1/audit/"+hash, headers)
	if code != http.StatusOK {
		t.Fatalf("GET /v1/audit/%s with %v: %d %s", hash, headerNames(headers), code, body)
	}
	var v auditView
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("audit entry: %v: %s", err, body)
	}
	return v, body
}

func headerNames(h map[string]string) []string {
	var out []string
	for k := range h {
		out = append(out, k)
	}
	return out
}

// legacyEntries appends n audit entries as the chain wrote them before
// link 2 (schema version 1, no "link" field, hash = SHA-256(prev ‖
// payload), plain SHA-256 request hashes), alternately of accounts a and b.
func legacyEntries(t *testing.T, st eventstore.Store, a, b uuid.UUID, n int) []string {
	t.Helper()
	prev := audit.Genesis
	var hashes []string
	evs := make([]eventstore.NewEvent, n)
	for i := range evs {
		acct := a
		if i%2 == 1 {
			acct = b
		}
		plain := sha256.Sum256([]byte("legacy request"))
		payload, err := audit.Canonical(audit.Completion{AccountID: acct, KeyID: uuid.New(), RequestID: "legacy-" + uuid.NewString(),
			RequestHash: hex.EncodeToString(plain[:]), ResponseHash: hex.EncodeToString(plain[:]), Tier: "nano", Model: "gpt-4.1-nano",
			Vendor: "openai", PromptTokens: 11, CompletionTokens: 7, CostMicroUSD: 5, Outcome: "ok", Attempts: 1, StartedAt: time.Now().UTC()})
		if err != nil {
			t.Fatal(err)
		}
		h, err := audit.HashV1(prev, payload)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := json.Marshal(map[string]any{"seq": i, "prev_hash": prev, "hash": h, "payload": json.RawMessage(payload)})
		evs[i] = eventstore.NewEvent{ID: uuid.New(), Type: audit.CompletionRecorded{}.EventType(), SchemaVersion: 1, Data: data,
			Metadata: eventstore.Metadata{Actor: "test:legacy"}}
		hashes = append(hashes, h)
		prev = h
	}
	if _, err := st.Append(context.Background(), audit.StreamID, eventstore.NoStream(), evs...); err != nil {
		t.Fatalf("appending legacy audit entries: %v", err)
	}
	return hashes
}

func accountOf(t *testing.T, base, key string) uuid.UUID {
	t.Helper()
	code, body := get(t, base+"/v1/key", map[string]string{"Authorization": "Bearer " + key})
	var k struct {
		Account struct {
			ID uuid.UUID `json:"id"`
		} `json:"account"`
	}
	if code != http.StatusOK || json.Unmarshal(body, &k) != nil || k.Account.ID == uuid.Nil {
		t.Fatalf("GET /v1/key: %d %s", code, body)
	}
	return k.Account.ID
}

// TestGatewayAuditEntryViews: an audit entry shows its payload to the
// owning account's keys and to the auditor key only; anyone else sees the
// chain (and can check a link-2 entry's link from it). Request hashes are
// HMAC-SHA-256 under a secret that two gateway processes on one data
// directory share. A chain of link-1 entries followed by link-2 entries
// verifies.
func TestGatewayAuditEntryViews(t *testing.T) {
	dataDir := t.TempDir()
	g := newGateway(t, "enterprise", "ARR_DATA_DIR="+dataDir, "ARR_AUDITOR_KEY="+e2eAuditorKey, "ARR_LOG_LEVEL=debug")
	owner := accountOf(t, g.gateway, g.key)
	g.createAccount("other@example.com", "pro")
	otherKey := g.mint("other@example.com", "gateway").Secret
	other := accountOf(t, g.gateway, otherKey)

	// Entries as the chain wrote them before link 2, then new ones on top.
	_, st := openStore(t, g.dbURL)
	legacy := legacyEntries(t, st, owner, other, 2)

	req := map[string]any{"messages": userMsg("What is the capital of France?"), "temperature": 0.3}
	reqBody, _ := json.Marshal(req) // the bytes g.chat sends
	code, h, out := g.chat(t, req)
	if code != http.StatusOK {
		t.Fatalf("completion: %d %v", code, out)
	}
	hash := routingOf(t, out)["audit_hash"].(string)
	requestID := h.Get("X-Request-Id")

	// The public view: the chain, no payload, and a link anyone can check.
	public, publicBody := getAudit(t, g.gateway, hash, nil)
	if public.View != "public" || public.Payload != nil || public.Hash != hash || public.PrevHash != legacy[1] || !public.Verified ||
		public.Chain.Link != audit.LinkV2 || !public.Chain.PublicVerifiable || len(public.Chain.Algorithms) != 2 {
		t.Fatalf("public view: %s", publicBody)
	}
	if got, err := audit.HashV2(public.PrevHash, public.PayloadSHA256); err != nil || got != hash {
		t.Fatalf("SHA-256(prev_hash ‖ payload_sha256) = %s, %v; want the entry's hash %s", got, err, hash)
	}
	var fields map[string]json.RawMessage
	_ = json.Unmarshal(publicBody, &fields)
	for k := range fields {
		switch k {
		case "object", "view", "hash", "prev_hash", "next_hash", "seq", "position", "recorded_at", "payload_sha256", "verified", "problem", "chain",
			"inclusion_proof": // the path of the public proof of its position in the signed log
		default:
			t.Errorf("the public view has a field %q: %s", k, publicBody)
		}
	}
	secrets := []string{owner.String(), requestID, "gpt-4.1-nano", `"account_id"`, `"key_id"`, `"request_id"`, `"model"`, `"tier"`, `"vendor"`,
		`"prompt_tokens"`, `"completion_tokens"`, `"cost_micro_usd"`, `"total_ms"`, `"upstream_ms"`, `"started_at"`, `"request_hash"`, `"payload"`}
	for _, s := range secrets {
		if s != "" && bytes.Contains(publicBody, []byte(s)) {
			t.Errorf("the public view contains %s: %s", s, publicBody)
		}
	}
	// Another account's key sees exactly what the public sees.
	_, otherBody := getAudit(t, g.gateway, hash, map[string]string{"Authorization": "Bearer " + otherKey})
	if !bytes.Equal(otherBody, publicBody) {
		t.Fatalf("another account's key:\n%s\nwant the public view:\n%s", otherBody, publicBody)
	}

	// The owner and the auditor see the payload, which hashes to
	// payload_sha256.
	var payload audit.Completion
	for _, tc := range []struct {
		name, view string
		headers    map[string]string
	}{
		{"owner", "owner", g.owner()},
		{"auditor", "auditor", map[string]string{"X-Auditor-Key": e2eAuditorKey}},
		{"auditor with another account's key", "auditor", map[string]string{"X-Auditor-Key": e2eAuditorKey, "Authorization": "Bearer " + otherKey}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, body := getAudit(t, g.gateway, hash, tc.headers)
			sum := sha256.Sum256(v.Payload)
			if v.View != tc.view || v.Payload == nil || hex.EncodeToString(sum[:]) != v.PayloadSHA256 || v.PayloadSHA256 != public.PayloadSHA256 {
				t.Fatalf("%s view: %s", tc.name, body)
			}
			if err := json.Unmarshal(v.Payload, &payload); err != nil {
				t.Fatal(err)
			}
			if payload.AccountID != owner || payload.RequestID != requestID || payload.Model != "gpt-4.1-nano" || payload.CostMicroUSD <= 0 {
				t.Fatalf("%s payload: %s", tc.name, v.Payload)
			}
		})
	}

	// request_hash is HMAC-SHA-256 under the key the gateway created in
	// its data directory (0600), not the SHA-256 anyone could compute.
	keyFile := filepath.Join(dataDir, "audit-hmac.key")
	fi, err := os.Stat(keyFile)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("audit key file: %v (mode %v), want mode 0600", err, fi.Mode().Perm())
	}
	rawKey, _ := os.ReadFile(keyFile)
	hmacKey, err := hex.DecodeString(strings.TrimSpace(string(rawKey)))
	if err != nil || len(hmacKey) != 32 {
		t.Fatalf("audit key file is not 64 hex digits: %v", err)
	}
	plain := sha256.Sum256(reqBody)
	mac := hmac.New(sha256.New, hmacKey)
	mac.Write(reqBody)
	if payload.RequestHash == hex.EncodeToString(plain[:]) || payload.RequestHash != hex.EncodeToString(mac.Sum(nil)) {
		t.Fatalf("request_hash %s: want HMAC-SHA-256 under the audit key, not SHA-256 %x", payload.RequestHash, plain)
	}
	if len(payload.ResponseHash) != 64 {
		t.Fatalf("response_hash %q", payload.ResponseHash)
	}

	// A second gateway process on the same data directory keys the same
	// request the same way.
	second := "http://" + freeAddr(t)
	g.extraEnv = append(g.extraEnv, "ARR_GATEWAY_ADDR="+strings.TrimPrefix(second, "http://"))
	p2 := g.start("serve", "gateway")
	waitHealthy(t, second, p2)
	resp, err := http.Post(second+"/v1/chat/completions", "application/json", bytes.NewReader(reqBody))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a completion without a key: %d", resp.StatusCode)
	}
	r2, _ := http.NewRequest(http.MethodPost, second+"/v1/chat/completions", bytes.NewReader(reqBody))
	r2.Header.Set("Authorization", "Bearer "+g.key)
	r2.Header.Set("X-Arr-Cache", "off")
	resp, err = http.DefaultClient.Do(r2)
	if err != nil {
		t.Fatal(err)
	}
	var out2 map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out2)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("completion on the second gateway: %d %v", resp.StatusCode, out2)
	}
	v2, body2 := getAudit(t, second, routingOf(t, out2)["audit_hash"].(string), g.owner())
	var payload2 audit.Completion
	if err := json.Unmarshal(v2.Payload, &payload2); err != nil || payload2.RequestHash != payload.RequestHash {
		t.Fatalf("the second gateway's request_hash %q differs from the first's %q: %s", payload2.RequestHash, payload.RequestHash, body2)
	}

	// Link-1 entries: public without their link check, the payload for
	// their owner only, and their link checks with it.
	for i, lh := range legacy {
		pub, pubBody := getAudit(t, g.gateway, lh, nil)
		if pub.View != "public" || pub.Payload != nil || pub.Chain.Link != audit.LinkV1 || pub.Chain.PublicVerifiable || !pub.Verified {
			t.Fatalf("legacy entry %d, public: %s", i, pubBody)
		}
		want := "owner"
		if i%2 == 1 {
			want = "public" // the other account's entry
		}
		v, body := getAudit(t, g.gateway, lh, g.owner())
		if v.View != want {
			t.Fatalf("legacy entry %d with the owner account's key: %s, want view %s", i, body, want)
		}
		if want == "owner" {
			if got, _ := audit.HashV1(v.PrevHash, v.Payload); got != lh {
				t.Fatalf("legacy entry %d: SHA-256(prev_hash ‖ payload) = %s, want %s", i, got, lh)
			}
		}
		if v, _ := getAudit(t, g.gateway, lh, map[string]string{"X-Auditor-Key": e2eAuditorKey}); v.View != "auditor" || v.Payload == nil {
			t.Fatalf("legacy entry %d with the auditor key: %+v", i, v)
		}
	}

	// Credentials that are sent must be valid.
	revoked := g.mint("other@example.com", "gateway")
	g.mustArr(nil, "keys", "revoke", "--id", revoked.ID, "--json")
	for _, tc := range []struct {
		name    string
		headers map[string]string
		code    string
	}{
		{"wrong API key", map[string]string{"Authorization": "Bearer arr_gw_" + strings.Repeat("A", 43)}, "invalid_api_key"},
		{"revoked API key", map[string]string{"Authorization": "Bearer " + revoked.Secret}, "invalid_api_key"},
		{"wrong auditor key", map[string]string{"X-Auditor-Key": e2eAuditorKey + "x"}, "invalid_auditor_key"},
		{"wrong auditor key with the owner's key", map[string]string{"X-Auditor-Key": "nope", "Authorization": "Bearer " + g.key}, "invalid_auditor_key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := get(t, g.gateway+"/v1/audit/"+hash, tc.headers)
			var e map[string]any
			_ = json.Unmarshal(body, &e)
			if _, c, _ := errorOf(e); status != http.StatusUnauthorized || c != tc.code || bytes.Contains(body, []byte(`"payload"`)) {
				t.Fatalf("%d %s, want 401 %s", status, body, tc.code)
			}
		})
	}

	// The whole chain, link 1 and link 2, verifies.
	var rep struct {
		OK      bool   `json:"ok"`
		Checked uint64 `json:"checked"`
	}
	g.mustArr(&rep, "audit", "verify", "--json")
	if !rep.OK || rep.Checked != uint64(len(legacy))+2 {
		t.Fatalf("arr audit verify: %+v, want ok over %d entries", rep, len(legacy)+2)
	}

	// Neither secret reaches the (debug-level) logs or --help.
	help, _, _ := g.arr("--help")
	for _, secret := range []string{e2eAuditorKey, strings.TrimSpace(string(rawKey))} {
		for name, text := range map[string]string{"first gateway's log": g.proc.logs.String(), "second gateway's log": p2.logs.String(), "--help": help} {
			if strings.Contains(text, secret) {
				t.Fatalf("a secret (%s…) is in the %s", secret[:6], name)
			}
		}
	}
}

// TestGatewayAuditorKeyOff: without ARR_AUDITOR_KEY an X-Auditor-Key
// header is refused (401), never taken as a credential, and the
// configured ARR_AUDIT_HMAC_KEY keys the request hash.
func TestGatewayAuditorKeyOff(t *testing.T) {
	key := bytes.Repeat([]byte{0x42}, 32)
	dataDir := t.TempDir()
	g := newGateway(t, "enterprise", "ARR_DATA_DIR="+dataDir, "ARR_AUDIT_HMAC_KEY="+hex.EncodeToString(key))
	req := map[string]any{"messages": userMsg("Say hello"), "temperature": 0.1}
	reqBody, _ := json.Marshal(req)
	code, _, out := g.chat(t, req)
	if code != http.StatusOK {
		t.Fatalf("completion: %d %v", code, out)
	}
	hash := routingOf(t, out)["audit_hash"].(string)
	status, body := get(t, g.gateway+"/v1/audit/"+hash, map[string]string{"X-Auditor-Key": e2eAuditorKey})
	var e map[string]any
	_ = json.Unmarshal(body, &e)
	if _, c, _ := errorOf(e); status != http.StatusUnauthorized || c != "auditor_key_disabled" {
		t.Fatalf("auditor key while it is off: %d %s", status, body)
	}
	v, _ := getAudit(t, g.gateway, hash, g.owner())
	var p audit.Completion
	_ = json.Unmarshal(v.Payload, &p)
	mac := hmac.New(sha256.New, key)
	mac.Write(reqBody)
	if p.RequestHash != hex.EncodeToString(mac.Sum(nil)) {
		t.Fatalf("request_hash %s: want HMAC-SHA-256 under ARR_AUDIT_HMAC_KEY", p.RequestHash)
	}
	if _, err := os.Stat(filepath.Join(dataDir, "audit-hmac.key")); !os.IsNotExist(err) {
		t.Fatalf("ARR_AUDIT_HMAC_KEY is set, yet the key file was made (%v)", err)
	}
}
