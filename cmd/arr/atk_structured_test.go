package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// atkFanoutSchema: every $defs entry refers twice to the next through
// allOf, so validating any reply evaluates the leaf 2^levels times while
// the schema stays about 65 bytes a level and 3 levels of JSON deep.
// The leaf is {"type":"object"} so the stand-in model's "valid" reply
// passes (CPU only; a failing leaf would also keep 2^levels errors).
func atkFanoutSchema(levels int) string {
	var b strings.Builder
	b.WriteString(`{"type":"object","$ref":"#/$defs/d0","$defs":{`)
	for i := 0; i < levels; i++ {
		fmt.Fprintf(&b, `"d%d":{"allOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]},`, i, i+1, i+1)
	}
	fmt.Fprintf(&b, `"d%d":{"type":"object"}}}`, levels)
	return b.String()
}

// TestAtkStructuredSchemaFanout: a free-plan key posts a 2.6 KB schema
// (within 16 KiB and 32 levels) whose validation is 2^40 evaluations.
// It should be refused with a 400 before any model call; instead arr
// takes it, calls the model, and then spins a core in the validation of
// the reply — which has no context, so it keeps running after the client
// hangs up, and every such request pins another core (with a failing
// leaf, memory doubles per level until the process dies).
func TestAtkStructuredSchemaFanout(t *testing.T) {
	site, _ := citeSite(t)
	model := newStructuredModel(t)
	e := newEnv(t)
	e.extraEnv = append(e.extraEnv, "ARR_ANSWER_FETCH_PRIVATE=allow", "ARR_ANSWER_SEED=off", "ARR_ANSWER_LLM_BASE_URL="+model.URL+"/v1", "ARR_ANSWER_LLM_API_KEY=standin")
	e.up()
	e.createAccount("fanout@example.com", "free")
	key := e.mint("fanout@example.com", "answer").Secret
	if o, errs, code := indexAdd(t, e, site.srv.URL+"/ferry", site.srv.URL+"/tour", site.srv.URL+"/lens"); code != 0 || o.Added != 3 {
		t.Fatalf("index add: exit %d %+v %s", code, o, errs)
	}
	body, _ := json.Marshal(structuredBody("When does the island ferry leave the north pier?", "valid", atkFanoutSchema(40)))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.answer+"/api/v1/answer", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	done := make(chan int, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- -1
			return
		}
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	// Bounded wait for either outcome: the answer's status, or the model
	// having been asked (the schema was accepted and its validation runs).
	for i := 0; i < 1200; i++ {
		select {
		case status := <-done:
			if status != http.StatusBadRequest {
				t.Fatalf("a 2^40-evaluation schema: status %d, want 400 before any model call", status)
			}
			return
		default:
		}
		if model.count("valid") > 0 {
			cancel() // the client hangs up; the validation goes on in arr
			t.Fatalf("a %d-byte schema of 2^40 evaluations per reply was accepted and the model asked (%d call); its validation now runs unbounded", len(atkFanoutSchema(40)), model.count("valid"))
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("neither an answer nor a model call within the bound")
}

// TestAtkStructuredHugeExponentWithoutModel: on an arr with no language
// model, where no structured answer can ever be written, a free key's
// schema of 20 numbers like 1e-999999 is still compiled in the request's
// decoding (about 0.35 s of CPU a number, ~650 fit in 16 KiB) before the
// model_required check runs. It should be refused for the number (a
// validation error naming the schema) without computing 10^999999; today
// the answer is model_required, after the compile has spent the CPU.
func TestAtkStructuredHugeExponentWithoutModel(t *testing.T) {
	e := newEnv(t)
	e.extraEnv = append(e.extraEnv, "ARR_ANSWER_SEED=off", "ARR_ANSWER_LLM_BASE_URL=", "ARR_ANSWER_LLM_API_KEY=")
	e.up()
	e.createAccount("bignum@example.com", "free")
	key := e.mint("bignum@example.com", "answer").Secret
	items := make([]string, 20)
	for i := range items {
		items[i] = `{"multipleOf":1e-999999}`
	}
	schema := `{"type":"object","properties":{"a":{"allOf":[` + strings.Join(items, ",") + `]}}}`
	status, b := postAnswer(t, e.answer, key, structuredBody("When does the ferry leave?", "big", schema))
	if status != 400 || b.Error == nil || b.Error.Field != "response_format.json_schema.schema" {
		t.Fatalf("a %d-byte schema of 20 numbers of exponent -999999: %d %+v; want 400 naming response_format.json_schema.schema, refused before compiling", len(schema), status, b.Error)
	}
}
