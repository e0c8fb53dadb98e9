package billingapi_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/arr-dev/arr/commands/billing"

	"github.com/arr-dev/arr/projections/builtin"
	"github.com/arr-dev/arr/projections/identity"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/adapters/payments"
	"github.com/arr-dev/arr/adapters/payments/stripemocktest"
	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/commands/complete/completetest"
	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/eventstore/postgres"
	"github.com/arr-dev/arr/migrations/migratetest"
	"github.com/arr-dev/arr/projections"
	"github.com/arr-dev/arr/readapi/app"
	"github.com/arr-dev/arr/readapi/billingapi"
	"github.com/arr-dev/arr/readapi/gateway"
	"github.com/arr-dev/arr/readapi/httpx"
)

const (
	webhookSecret = "whsec_billing_test"
	adminKey      = "admin-key-for-tests"
)

// world is a gateway served in-process on its own database, with billing
// pointed at a stripe-mock (or at stripeBase when given).
type world struct {
	t      testing.TB
	pool   *pgxpool.Pool
	store  eventstore.Store
	runner *projections.Runner
	cmds   commands.Commands
	ids    app.Identities
	bill   *billing.Billing
	url    string
}

// billing is the world's billing use case (what the account pages call).
func (w *world) billing() *billing.Billing {
	w.t.Helper()
	if w.bill == nil {
		w.t.Fatal("this world has no billing")
	}
	return w.bill
}

// newWorld starts the gateway. stripeBase "" starts a stripe-mock; "none"
// leaves the application's Billing nil, as cmd/arr does without
// STRIPE_API_KEY.
func newWorld(t testing.TB, stripeBase string) *world {
	t.Helper()
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, migratetest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	st, err := postgres.New(pool, postgres.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	runner, err := projections.NewRunner(pool, st, projections.Config{}, builtin.All()...)
	if err != nil {
		t.Fatal(err)
	}
	if err := runner.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	cmds, err := commands.New(commands.Config{Store: st, Clock: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	application, err := app.New(pool, cmds)
	if err != nil {
		t.Fatal(err)
	}
	w := &world{t: t, pool: pool, store: st, runner: runner, cmds: cmds, ids: application.Queries.Identities}
	application.WaitFor, application.Head = w.waitFor, st.Head
	gw := completetest.New(t, st, "http://127.0.0.1:1/v1", nil)
	application.Completions, application.Embeddings = gw.Completions, gw.Embeddings
	if stripeBase != "none" {
		if stripeBase == "" {
			stripeBase = stripemocktest.Start(t)
		}
		pay, err := payments.New(payments.Config{APIKey: stripemocktest.APIKey, APIBase: stripeBase, WebhookSecret: webhookSecret})
		if err != nil {
			t.Fatal(err)
		}
		core, err := billing.New(billing.Config{Payments: pay, Subscriber: billingapi.SubscriberOf(w.ids), ChangePlan: cmds.ChangePlan,
			WaitFor: func(ctx context.Context, pos uint64) error { return w.waitFor(ctx, identity.Name, pos) }})
		if err != nil {
			t.Fatal(err)
		}
		application.Billing, w.bill = core, core
	}
	d := httpx.Deps{App: application, Version: "test"}
	srv := httptest.NewUnstartedServer(nil)
	if d.Site, err = httpx.NewSite("http://"+srv.Listener.Addr().String(), srv.Listener.Addr().String()); err != nil {
		t.Fatal(err)
	}
	h, err := gateway.New(d, gateway.Options{AdminKey: adminKey})
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = h
	srv.Start()
	t.Cleanup(srv.Close)
	w.url = srv.URL
	return w
}

func (w *world) waitFor(ctx context.Context, name string, pos uint64) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return w.runner.WaitFor(ctx, name, pos)
}

// createAccount opens an account and waits until the read model has it.
func (w *world) createAccount(email string, plan account.Plan) commands.AccountCreatedResult {
	w.t.Helper()
	r, err := w.cmds.CreateAccount.Handle(context.Background(), commands.CreateAccount{Email: email, Plan: string(plan)})
	if err != nil {
		w.t.Fatal(err)
	}
	if err := w.waitFor(context.Background(), identity.Name, r.Position); err != nil {
		w.t.Fatal(err)
	}
	return r
}

// signIn runs the magic-link commands and returns the session token, once
// the read model knows the session.
func (w *world) signIn(email string) string {
	w.t.Helper()
	ctx := context.Background()
	link, err := w.cmds.RequestSignIn.Handle(ctx, commands.RequestSignIn{Email: email, Service: account.Gateway})
	if err != nil {
		w.t.Fatal(err)
	}
	s, err := w.cmds.CompleteSignIn.Handle(ctx, commands.CompleteSignIn{LinkID: link.LinkID.String(), Token: link.Token})
	if err != nil {
		w.t.Fatal(err)
	}
	if err := w.waitFor(ctx, identity.Name, s.Position); err != nil {
		w.t.Fatal(err)
	}
	return s.SessionToken
}

// plan reads the account's plan and customer from the identity read model.
func (w *world) plan(id string) (account.Plan, string) {
	w.t.Helper()
	var plan account.Plan
	var customer *string
	if err := w.pool.QueryRow(context.Background(), `SELECT plan, stripe_customer_id FROM rm_identity.accounts WHERE account_id = $1`, id).Scan(&plan, &customer); err != nil {
		w.t.Fatal(err)
	}
	if customer == nil {
		return plan, ""
	}
	return plan, *customer
}

// head is the event log's head position: it moves only when something is
// appended.
func (w *world) head() uint64 {
	w.t.Helper()
	h, err := w.store.Head(context.Background())
	if err != nil {
		w.t.Fatal(err)
	}
	return h
}

// csrf computes the session's CSRF token the way httpx.CSRFToken does.
func csrf(session string) string {
	m := hmac.New(sha256.New, []byte(session))
	m.Write([]byte("arr csrf v1"))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// post sends a JSON POST and decodes the JSON answer into a map.
func post(t testing.TB, url string, body any, headers map[string]string) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	default:
		js, _ := json.Marshal(b)
		rd = bytes.NewReader(js)
	}
	req, _ := http.NewRequest(http.MethodPost, url, rd)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("POST %s: %d, not JSON: %q", url, resp.StatusCode, raw)
	}
	return resp.StatusCode, out
}

func errCode(body map[string]any) string {
	e, _ := body["error"].(map[string]any)
	s, _ := e["code"].(string)
	return s
}

func closedPort(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr
}
