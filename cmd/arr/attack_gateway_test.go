package main_test

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Findings of a black-box review of issue 36's gateway fixes (findings 3
// and 4). Each test fails on the code it was written against.

// TestIdleDeclaredBodiesDoNotFillTheGateway: the bytes of bodies in
// flight are charged as declared (Content-Length, or 4 MiB for a chunked
// body) before a byte arrives, and held until ARR_BODY_TIMEOUT (30 s).
// One account with four keys opens sixteen connections that send only
// their headers (Content-Length: 4 MiB, no body): the gateway holds no
// memory for them, yet its whole 64 MiB bound is taken, and every other
// tenant's small chat completion is refused 503 bodies_in_flight for as
// long as the attacker keeps reconnecting. A slow body is not counted
// against any quota (ARR_BODY_TIMEOUT's help), so this costs nothing.
func TestIdleDeclaredBodiesDoNotFillTheGateway(t *testing.T) {
	g := newGateway(t, "enterprise")
	attacker := "gw-enterprise@example.com"
	keys := []string{g.key, g.mint(attacker, "gateway").Secret, g.mint(attacker, "gateway").Secret, g.mint(attacker, "gateway").Secret}
	g.createAccount("victim@example.com", "enterprise")
	victim := g.mint("victim@example.com", "gateway").Secret

	addr := strings.TrimPrefix(g.gateway, "http://")
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for _, k := range keys {
		for range 4 {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			conns = append(conns, c)
			fmt.Fprintf(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{", addr, k, 4<<20)
		}
	}
	time.Sleep(time.Second)

	refused := 0
	var last string
	for i := range 3 {
		status, _, out := g.chat(t, map[string]any{"model": "gpt-4.1-nano", "max_tokens": 8, "messages": userMsg(fmt.Sprintf("hello %d", i))}, "Authorization", "Bearer "+victim)
		if status != http.StatusOK {
			refused++
			last = fmt.Sprintf("%d %v", status, out["error"])
		}
	}
	// The attacker's connections are still open (none was answered).
	for _, c := range conns[:1] {
		_ = c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		if _, err := bufio.NewReader(c).ReadByte(); err == nil {
			t.Log("an attacker connection was answered")
		}
	}
	if refused > 0 {
		t.Fatalf("16 connections of one account that sent only headers (no body bytes) made %d of 3 small requests of another account fail: %s", refused, last)
	}
}
