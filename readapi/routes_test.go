package readapi_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/adapters/demodata"
	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/commands/complete/completetest"
	"github.com/arr-dev/arr/eventstore/postgres"
	"github.com/arr-dev/arr/migrations/migratetest"
	"github.com/arr-dev/arr/readapi/answerapi"
	"github.com/arr-dev/arr/readapi/app"
	"github.com/arr-dev/arr/readapi/gateway"
	"github.com/arr-dev/arr/readapi/httpx"
	"github.com/arr-dev/arr/readapi/recordsapi"
)

// TestEveryRouteIsDocumented: each service's routes and its OpenAPI
// document list the same operations.
func TestEveryRouteIsDocumented(t *testing.T) {
	pool, err := pgxpool.New(t.Context(), migratetest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	st, err := postgres.New(pool, postgres.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close() //nolint:errcheck // test teardown
	cmds, err := commands.New(commands.Config{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	application, err := app.New(pool, cmds)
	if err != nil {
		t.Fatal(err)
	}
	// A cursor key of its own: this process is the only one serving the database.
	application.CursorKey = bytes.Repeat([]byte{1}, 32)
	if application.Queries.Gazetteer, err = demodata.LoadGazetteer(); err != nil {
		t.Fatal(err)
	}
	gw := completetest.New(t, st, "http://127.0.0.1:1/v1", application.Queries.TierQuality)
	application.Completions, application.Embeddings = gw.Completions, gw.Embeddings
	application.Answers.Served = answerapi.NewServed(cmds.RecordAnswersServed, nil)
	site, err := httpx.NewSite("http://127.0.0.1:8083")
	if err != nil {
		t.Fatal(err)
	}
	deps := httpx.Deps{App: application, Version: "test", Site: site}
	services := []struct {
		name    string
		new     func(httpx.Deps) (http.Handler, error)
		openapi func() ([]byte, error)
	}{
		{"answer", answerapi.New, answerapi.OpenAPI},
		{"gateway", func(d httpx.Deps) (http.Handler, error) { return gateway.New(d, gateway.Options{}) }, gateway.OpenAPI},
		{"records", recordsapi.New, recordsapi.OpenAPI},
	}
	for _, s := range services {
		t.Run(s.name, func(t *testing.T) {
			h, err := s.new(deps)
			if err != nil {
				t.Fatal(err)
			}
			var routes []string
			for _, r := range h.(interface{ Routes() gin.RoutesInfo }).Routes() {
				routes = append(routes, r.Method+" "+openAPIPath(r.Path))
			}
			var doc struct {
				OpenAPI string                                `json:"openapi"`
				Paths   map[string]map[string]json.RawMessage `json:"paths"`
			}
			raw, err := s.openapi()
			if err != nil {
				t.Fatalf("assembling the OpenAPI document: %v", err)
			}
			if err := json.Unmarshal(raw, &doc); err != nil {
				t.Fatalf("openapi.json is not JSON: %v", err)
			}
			if !strings.HasPrefix(doc.OpenAPI, "3.") {
				t.Fatalf("openapi version %q", doc.OpenAPI)
			}
			var documented []string
			// A last path parameter written with its file extension
			// ("{y}.mvt") is a route's parameter that ends with it.
			extParam := regexp.MustCompile(`(\{[a-z_]+\})\.[a-z]+$`)
			for p, ops := range doc.Paths {
				for m := range ops {
					documented = append(documented, strings.ToUpper(m)+" "+extParam.ReplaceAllString(p, "$1"))
				}
			}
			sort.Strings(routes)
			sort.Strings(documented)
			if strings.Join(routes, "\n") != strings.Join(documented, "\n") {
				t.Fatalf("routes and OpenAPI differ\nroutes:\n%s\ndocumented:\n%s", strings.Join(routes, "\n"), strings.Join(documented, "\n"))
			}
		})
	}
}

func openAPIPath(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		if strings.HasPrefix(s, ":") || strings.HasPrefix(s, "*") {
			parts[i] = "{" + s[1:] + "}"
		}
	}
	return strings.Join(parts, "/")
}
