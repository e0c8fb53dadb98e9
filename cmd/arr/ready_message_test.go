package main

import (
	"os"
	"strings"
	"testing"
)

// TestReadyMessage: the ready message names the three services, the
// commands of a first key and question with the binary as invoked, says
// the gateway has no upstream (and how to give it one) only when it has
// none, and the environment the other terminal needs only when it is not
// the default.
func TestReadyMessage(t *testing.T) {
	r := readiness{bases: map[string]string{"answer": "http://127.0.0.1:8081", "gateway": "http://127.0.0.1:8082", "records": "http://127.0.0.1:8083"},
		self: "./bin/arr", upstream: false}
	m := r.message()
	for _, want := range []string{"http://127.0.0.1:8081/api/v1/answer", "http://127.0.0.1:8082/v1", "http://127.0.0.1:8083/api/v1/parcels", "map /map",
		"  ./bin/arr accounts create --email you@example.com\n", "  ANSWER_KEY=$(./bin/arr keys mint --email you@example.com --service answer)\n",
		`  curl -s -w '\n' http://127.0.0.1:8081/api/v1/answer -H "Authorization: Bearer $ANSWER_KEY" -d '{"q":"` + firstQuestion + `"}'` + "\n",
		"The gateway has no upstream yet", "ARR_UPSTREAM_BASE_URL=http://127.0.0.1:11434/v1 ARR_UPSTREAM_MODEL=llama3.2", "Ctrl-C stops arr."} {
		if !strings.Contains(m, want) {
			t.Errorf("the ready message lacks %q:\n%s", want, m)
		}
	}
	if strings.Contains(m, "same DATABASE_URL") {
		t.Errorf("on the defaults the message asks for the same environment:\n%s", m)
	}
	r.upstream, r.sameEnv = true, true
	m = r.message()
	if strings.Contains(m, "no upstream") || !strings.Contains(m, "with the same DATABASE_URL and ARR_DATA_DIR") {
		t.Errorf("with an upstream and an environment of its own:\n%s", m)
	}
}

// TestReadmeNamesTheDefaults: the README's first requests name the
// services' default addresses and the binary scripts/up.sh builds (the
// end-to-end test of the README replaces both with its own, so it cannot
// see them drift).
func TestReadmeNamesTheDefaults(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := configFrom(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, addr := range []string{cfg.AnswerAddr, cfg.GatewayAddr, cfg.RecordsAddr} {
		if !strings.Contains(string(readme), "http://"+addr+"/") {
			t.Errorf("the README names no URL on the default address %s", addr)
		}
	}
	up, err := os.ReadFile("../../scripts/up.sh")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(up), "-o bin/arr ./cmd/arr") || !strings.Contains(string(readme), "./bin/arr keys mint") {
		t.Error("the README's ./bin/arr is not the binary scripts/up.sh builds")
	}
}
