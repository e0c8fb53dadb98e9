package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/arr-dev/arr/adapters/upstream/upstreamtest"
	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/migrations/migratetest"
	"github.com/arr-dev/arr/projections/identity"
	"github.com/arr-dev/arr/projections/parcels"
	"github.com/arr-dev/arr/readapi/app"
)

// componentGrace is the shutdown grace period of the component test.
const componentGrace = 10 * time.Second

// TestComponentEveryRoleInProcess builds the application and the process
// in-process, from one Config, through run (what `arr up` runs): it serves
// a completion, an answer and a records query from it, then shuts down
// within the grace period.
func TestComponentEveryRoleInProcess(t *testing.T) {
	up := upstreamtest.Start(t)
	cfg := componentConfig(t, map[string]string{
		"DATABASE_URL": migratetest.NewDatabase(t), "ARR_DATA_DIR": t.TempDir(),
		"ARR_ANSWER_ADDR": "127.0.0.1:0", "ARR_GATEWAY_ADDR": "127.0.0.1:0", "ARR_RECORDS_ADDR": "127.0.0.1:0",
		"ARR_UPSTREAM_BASE_URL": up.URL, "ARR_ANSWER_LLM_BASE_URL": "http://127.0.0.1:1/v1",
		"ARR_SHUTDOWN_GRACE": componentGrace.String(), "ARR_LOG_LEVEL": "warn",
	})
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	type ready struct {
		urls map[string]string
		app  app.Application
	}
	readyc := make(chan ready, 1)
	done := make(chan error, 1)
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	go func() {
		done <- run(ctx, cfg, log, roleNames(), "test", runHooks{started: func(urls map[string]string, a app.Application) { readyc <- ready{urls, a} }})
	}()
	var r ready
	select {
	case r = <-readyc:
	case err := <-done:
		t.Fatalf("run ended before it served: %v", err)
	case <-time.After(3 * time.Minute):
		t.Fatal("run did not start within 3 minutes")
	}
	gatewayKey, answerKey := componentKeys(t, r.app)

	t.Run("a completion", func(t *testing.T) {
		status, body := componentPost(t, r.urls["gateway"]+"/v1/chat/completions", gatewayKey,
			`{"model":"auto","messages":[{"role":"user","content":"Say hello."}]}`)
		var reply struct {
			Choices []struct {
				Message struct{ Content string } `json:"message"`
			} `json:"choices"`
			Routing struct {
				AuditHash string `json:"audit_hash"`
			} `json:"routing"`
		}
		if status != http.StatusOK || json.Unmarshal(body, &reply) != nil || len(reply.Choices) != 1 || reply.Routing.AuditHash == "" {
			t.Fatalf("POST /v1/chat/completions: %d %s", status, body)
		}
	})
	t.Run("an answer", func(t *testing.T) {
		// The first start seeds the local index with arr's own
		// documentation in the background: ask until it answers (an
		// answer's cache key holds the index's generation, so each new
		// generation is a fresh answer), 60 s at most.
		for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(500 * time.Millisecond) {
			status, body := componentGet(t, r.urls["answer"]+"/api/v1/answer?q=How+do+I+verify+a+gateway+audit+hash%3F", answerKey)
			var a struct {
				Answer  string            `json:"answer"`
				Sources []json.RawMessage `json:"sources"`
			}
			if status != http.StatusOK || json.Unmarshal(body, &a) != nil || a.Answer == "" {
				t.Fatalf("GET /api/v1/answer: %d %s", status, body)
			}
			if len(a.Sources) > 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("no cited answer within 60 s of the start: %s", body)
			}
		}
	})
	t.Run("a records query", func(t *testing.T) {
		componentAwaitProjection(t, r.app, parcels.Name)
		status, body := componentGet(t, r.urls["records"]+"/api/v1/parcels?bbox=-76.72,39.19,-76.52,39.38&limit=5", "")
		var fc struct {
			Type     string            `json:"type"`
			Features []json.RawMessage `json:"features"`
		}
		if status != http.StatusOK || json.Unmarshal(body, &fc) != nil || fc.Type != "FeatureCollection" || len(fc.Features) == 0 {
			t.Fatalf("GET /api/v1/parcels: %d %.300s", status, body)
		}
	})

	start := time.Now()
	stop()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run: %v", err)
		}
		took := time.Since(start)
		if took > componentGrace {
			t.Fatalf("the shutdown took %v, more than the grace period %v", took, componentGrace)
		}
		t.Logf("shut down in %v (grace period %v)", took.Round(time.Millisecond), componentGrace)
	case <-time.After(componentGrace + 5*time.Second):
		t.Fatalf("run did not return within the grace period (%v)", componentGrace)
	}
	if _, err := http.Get(r.urls["gateway"] + "/healthz"); err == nil {
		t.Fatal("the gateway still answers after the shutdown")
	}
}

// componentConfig parses env as arr's configuration, nothing else (the
// test's own environment is not read).
func componentConfig(t *testing.T, env map[string]string) Config {
	t.Helper()
	var cfg Config
	cfg.bind(pflag.NewFlagSet("test", pflag.ContinueOnError), func(k string) string { return env[k] })
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// componentKeys opens an account with a gateway key and an answer key,
// through the application's commands, and waits until they authenticate.
func componentKeys(t *testing.T, a app.Application) (gatewayKey, answerKey string) {
	t.Helper()
	ctx := context.Background()
	md := commands.NewMetadata("test", "")
	acct, err := a.Commands.CreateAccount.Handle(ctx, commands.CreateAccount{Email: "component@example.com", Plan: string(account.Pro), Metadata: md})
	if err != nil {
		t.Fatal(err)
	}
	var keys [2]string
	var pos uint64
	for i, svc := range []account.Service{account.Gateway, account.Answer} {
		k, err := a.Commands.IssueKey.Handle(ctx, commands.IssueKey{AccountID: acct.AccountID, Service: svc, Metadata: md})
		if err != nil {
			t.Fatal(err)
		}
		keys[i], pos = k.Secret, k.Position
	}
	if err := a.WaitFor(ctx, identity.Name, pos); err != nil {
		t.Fatal(err)
	}
	return keys[0], keys[1]
}

// componentAwaitProjection waits (60 s at most) until the projection has
// applied the log as it is now (the demo data's layers, for parcels).
func componentAwaitProjection(t *testing.T, a app.Application, projection string) {
	t.Helper()
	ctx := context.Background()
	head, err := a.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(60 * time.Second); ; {
		err := a.WaitFor(ctx, projection, head)
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not reach position %d: %v", projection, head, err)
		}
	}
}

func componentGet(t *testing.T, url, key string) (int, []byte) {
	t.Helper()
	return componentDo(t, http.MethodGet, url, key, "")
}

func componentPost(t *testing.T, url, key, body string) (int, []byte) {
	t.Helper()
	return componentDo(t, http.MethodPost, url, key, body)
}

func componentDo(t *testing.T, method, url, key, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader([]byte(body)))
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	c := &http.Client{Timeout: time.Minute}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, bytes.TrimSpace(b)
}
