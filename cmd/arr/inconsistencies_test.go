package main_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// TestSmallerInconsistencies (issue 23, finding 11): two different keys
// in X-API-Key and Authorization are refused; the records service refuses
// repeated and unknown query parameters and numbers Go would read but a
// decimal reader would not; consistency proofs follow RFC 9162's bounds
// whichever way the sizes are given; /v1/log/* has a per-IP limit; a call
// with a key to a public records endpoint is counted per key, so the
// per-IP limit never refuses it.
func TestSmallerInconsistencies(t *testing.T) {
	const perIP = 20
	e := newEnv(t)
	e.extraEnv = append(e.extraEnv, "REDIS_URL=", "ARR_ANSWER_SEED=off", logKeyEnv(), fmt.Sprintf("ARR_PUBLIC_RATE_LIMIT=%d", perIP))
	e.up()
	e.createAccount("ann@example.com", "free")
	e.createAccount("ben@example.com", "free")
	ann := e.mint("ann@example.com", "records").Secret
	ben := e.mint("ben@example.com", "records").Secret
	e.mustArr(nil, "events", "checkpoint", "--json")
	const box = "-76.72,39.19,-76.52,39.38"

	t.Run("two different keys are refused, naming both headers", func(t *testing.T) {
		r := send(t, http.MethodGet, e.records+"/api/v1/lists", map[string]string{"Authorization": "Bearer " + ann, "X-API-Key": ben}, nil)
		if r.status != http.StatusBadRequest || r.err.Code != "conflicting_api_keys" ||
			!strings.Contains(r.err.Message, "Authorization") || !strings.Contains(r.err.Message, "X-API-Key") {
			t.Errorf("Bearer and X-API-Key of two accounts: %d %s; want 400 conflicting_api_keys naming both headers: %s", r.status, r.err.Code, r.raw)
		}
		if r := send(t, http.MethodGet, e.records+"/api/v1/lists", map[string]string{"Authorization": "Bearer " + ann, "X-API-Key": ann}, nil); r.status != http.StatusOK {
			t.Errorf("the same key in both headers: %d %s", r.status, r.raw)
		}
	})

	t.Run("records refuses repeated and unknown parameters and non-decimal numbers", func(t *testing.T) {
		for _, tc := range []struct {
			path, code, field string
		}{
			{"/api/v1/parcels?bbox=" + box + "&bbox=-80,30,-79,31", "invalid_query_parameter", "bbox"},
			{"/api/v1/parcels?bbox=" + box + "&colour=red", "invalid_query_parameter", "colour"},
			{"/api/v1/parcels?bbox=-76.72,39.19,-76.52,39.38&limit=5&limit=6", "invalid_query_parameter", "limit"},
			{"/api/v1/states?limit=5&ofset=10", "invalid_query_parameter", "ofset"},
			{"/api/v1/layers?x=1", "invalid_query_parameter", "x"},
			{"/api/v1/parcels?bbox=1_0,39.19,1_1,39.38", "bbox_not_a_number", "bbox"},
			{"/api/v1/parcels?bbox=0x1p-2,39.19,1,39.38", "bbox_not_a_number", "bbox"},
			{"/api/v1/signals/123?county=24510&county=24005", "invalid_query_parameter", "county"},
		} {
			headers := map[string]string(nil)
			if strings.HasPrefix(tc.path, "/api/v1/signals") {
				headers = map[string]string{"Authorization": "Bearer " + ann}
			}
			r := send(t, http.MethodGet, e.records+tc.path, headers, nil)
			if r.status != http.StatusBadRequest || r.err.Code != tc.code || r.err.Field != tc.field || !strings.Contains(r.err.Message, tc.field) {
				t.Errorf("GET %s: %d %s (field %q); want 400 %s naming %s: %s", tc.path, r.status, r.err.Code, r.err.Field, tc.code, tc.field, r.raw)
			}
		}
		if r := send(t, http.MethodGet, e.records+"/api/v1/parcels?bbox="+box+"&layers=vacant&limit=5", nil, nil); r.status != http.StatusOK {
			t.Errorf("a well-formed parcels request: %d %s", r.status, r.raw)
		}
	})

	t.Run("consistency proofs follow RFC 9162's bounds", func(t *testing.T) {
		code, body := get(t, e.gateway+"/v1/log/head", nil)
		var h signedHeadView
		if code != http.StatusOK || json.Unmarshal(body, &h) != nil || h.Size < 2 {
			t.Fatalf("log head: %d %s", code, body)
		}
		for _, tc := range []struct {
			query, code string
		}{
			{"first=0&second=0", "invalid_first"},
			{"first=0", "invalid_first"},
			{fmt.Sprintf("first=0&second=%d", h.Size), "invalid_first"},
			{"first=1&second=0", "invalid_second"},
			{fmt.Sprintf("first=%d&second=0", h.Size), "invalid_second"},
			{fmt.Sprintf("first=%d&second=%d", h.Size, h.Size-1), "first_above_second"},
		} {
			r := send(t, http.MethodGet, e.gateway+"/v1/log/proof/consistency?"+tc.query, nil, nil)
			if r.status != http.StatusBadRequest || r.err.Code != tc.code {
				t.Errorf("consistency %s: %d %s; want 400 %s: %s", tc.query, r.status, r.err.Code, tc.code, r.raw)
			}
		}
		r := send(t, http.MethodGet, fmt.Sprintf("%s/v1/log/proof/consistency?first=%d&second=%d", e.gateway, h.Size, h.Size), nil, nil)
		var p struct {
			First, Second uint64
			Consistency   []string `json:"consistency"`
		}
		if r.status != http.StatusOK || json.Unmarshal(r.raw, &p) != nil || p.First != h.Size || p.Second != h.Size || p.Consistency == nil || len(p.Consistency) != 0 {
			t.Errorf("consistency from a size to itself: %d %s; want 200 with an empty proof", r.status, r.raw)
		}
	})

	t.Run("the log's routes have a per-IP limit", func(t *testing.T) {
		var last reply
		for i := 0; i <= perIP; i++ {
			if last = send(t, http.MethodGet, e.gateway+"/v1/log/head", nil, nil); last.status == http.StatusTooManyRequests {
				break
			}
		}
		if last.status != http.StatusTooManyRequests || last.err.Code != "ip_rate_limit_reached" || last.header.Get("Retry-After") == "" || last.err.Type != "rate_limit_error" {
			t.Fatalf("%d calls to /v1/log/head with ARR_PUBLIC_RATE_LIMIT=%d: the last %d %s (Retry-After %q); want 429 ip_rate_limit_reached",
				perIP+1, perIP, last.status, last.err.Code, last.header.Get("Retry-After"))
		}
		if strings.Contains(strings.ToLower(last.err.Message), "key") {
			t.Errorf("the log's per-IP refusal suggests a key, which the log's routes do not count by: %s", last.err.Message)
		}
	})

	t.Run("a keyed call to a public endpoint is counted per key, never refused per IP", func(t *testing.T) {
		var last reply
		for i := 0; i <= perIP; i++ {
			if last = send(t, http.MethodGet, e.records+"/api/v1/states", nil, nil); last.status == http.StatusTooManyRequests {
				break
			}
		}
		if last.status != http.StatusTooManyRequests || last.err.Code != "ip_rate_limit_reached" {
			t.Fatalf("key-less calls past the per-IP limit: %d %s", last.status, last.raw)
		}
		for _, h := range []map[string]string{{"Authorization": "Bearer " + ann}, {"X-API-Key": ben}} {
			r := send(t, http.MethodGet, e.records+"/api/v1/states", h, nil)
			limit, _ := strconv.Atoi(r.header.Get("X-RateLimit-Limit"))
			if r.status != http.StatusOK || limit != 1000 {
				t.Errorf("a keyed call after the IP's public limit: %d, X-RateLimit-Limit %q; want 200 counted against the key's 1000 per hour: %s",
					r.status, r.header.Get("X-RateLimit-Limit"), r.raw)
			}
		}
		if r := send(t, http.MethodGet, e.records+"/api/v1/states", map[string]string{"X-API-Key": "arr_rec_not_a_key"}, nil); r.status != http.StatusUnauthorized {
			t.Errorf("a wrong key on a public endpoint: %d; want 401, never served as key-less: %s", r.status, r.raw)
		}
	})
}
