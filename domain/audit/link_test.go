package audit_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain/audit"
)

// linkV1 builds an entry as the chain wrote them before link 2: schema
// version 1 JSON without a "link" field, hash = SHA-256(prev ‖ payload).
func linkV1(t testing.TB, seq uint64, prev string, payload []byte) *audit.CompletionRecorded {
	t.Helper()
	h, err := audit.HashV1(prev, payload)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(map[string]any{"seq": seq, "prev_hash": prev, "hash": h, "payload": json.RawMessage(payload)})
	var e audit.CompletionRecorded
	if err := json.Unmarshal(data, &e); err != nil {
		t.Fatal(err)
	}
	return &e
}

func payload(t testing.TB, i int) []byte {
	t.Helper()
	p, err := audit.Canonical(audit.Completion{AccountID: uuid.New(), RequestID: "req-" + string(rune('a'+i)), Tier: "nano", Model: "m",
		PromptTokens: int64(i), CostMicroUSD: 42, StartedAt: time.Unix(1700000000, 0)})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestChainOfBothLinkAlgorithms: a chain whose first entries were written
// with link 1 and whose later ones with link 2 verifies entry by entry;
// the link algorithm of an entry cannot be swapped.
func TestChainOfBothLinkAlgorithms(t *testing.T) {
	prev := audit.Genesis
	var chain []*audit.CompletionRecorded
	for i := 0; i < 6; i++ {
		var e *audit.CompletionRecorded
		if i < 3 {
			e = linkV1(t, uint64(i), prev, payload(t, i))
		} else {
			var err error
			if e, err = audit.Link(uint64(i), prev, payload(t, i)); err != nil {
				t.Fatal(err)
			}
			// As stored and read back.
			data, _ := json.Marshal(e)
			if !strings.Contains(string(data), `"link":2`) {
				t.Fatalf("a new entry does not say its link algorithm: %s", data)
			}
			e = &audit.CompletionRecorded{}
			if err := json.Unmarshal(data, e); err != nil {
				t.Fatal(err)
			}
		}
		chain = append(chain, e)
		prev = e.Hash
	}
	prev = audit.Genesis
	for i, e := range chain {
		want := audit.LinkV1
		if i >= 3 {
			want = audit.LinkV2
		}
		if e.LinkAlgorithm() != want {
			t.Fatalf("entry %d: link %d, want %d", i, e.LinkAlgorithm(), want)
		}
		if err := audit.Verify(e, prev, uint64(i)); err != nil {
			t.Fatalf("entry %d (link %d): %v", i, want, err)
		}
		prev = e.Hash
	}

	cases := []struct {
		name   string
		entry  int
		mutate func(e *audit.CompletionRecorded)
		want   string
	}{
		{"v1 entry claims link 2", 1, func(e *audit.CompletionRecorded) { e.Link = audit.LinkV2 }, "does not match SHA-256(prev_hash ‖ SHA-256(payload))"},
		{"v2 entry claims link 1", 4, func(e *audit.CompletionRecorded) { e.Link = audit.LinkV1 }, "does not match SHA-256(prev_hash ‖ payload)"},
		{"v2 entry drops its link field", 4, func(e *audit.CompletionRecorded) { e.Link = 0 }, "does not match SHA-256(prev_hash ‖ payload)"},
		{"unknown link algorithm", 4, func(e *audit.CompletionRecorded) { e.Link = 3 }, "unknown link algorithm 3"},
		{"v1 payload changed", 1, func(e *audit.CompletionRecorded) {
			e.Payload = []byte(strings.Replace(string(e.Payload), `"cost_micro_usd":42`, `"cost_micro_usd":41`, 1))
		}, "does not match"},
		{"v2 payload changed", 4, func(e *audit.CompletionRecorded) {
			e.Payload = []byte(strings.Replace(string(e.Payload), `"cost_micro_usd":42`, `"cost_micro_usd":41`, 1))
		}, "does not match"},
		{"first v2 entry relinked", 3, func(e *audit.CompletionRecorded) { e.PrevHash = audit.Genesis }, "prev_hash"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := *chain[tc.entry]
			tc.mutate(&e)
			err := audit.Verify(&e, chain[tc.entry-1].Hash, uint64(tc.entry))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Verify = %v, want an error about %q", err, tc.want)
			}
		})
	}
}

// TestLinkV2IsCheckableWithoutThePayload: hash, prev_hash and
// payload_sha256 — the public view — are enough to check a link-2 entry,
// and payload_sha256 is SHA-256 of the payload text.
func TestLinkV2IsCheckableWithoutThePayload(t *testing.T) {
	p := payload(t, 1)
	e, err := audit.Link(0, audit.Genesis, p)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(p)
	digest := audit.PayloadSHA256(p)
	if digest != hex.EncodeToString(sum[:]) {
		t.Fatalf("PayloadSHA256 = %s, want SHA-256 of the payload", digest)
	}
	got, err := audit.HashV2(e.PrevHash, digest)
	if err != nil || got != e.Hash {
		t.Fatalf("HashV2(prev, payload_sha256) = %s, %v; want the entry's hash %s", got, err, e.Hash)
	}
	v1, _ := audit.HashV1(e.PrevHash, p)
	if v1 == e.Hash {
		t.Fatal("link 1 and link 2 give the same hash")
	}
	for _, bad := range []struct{ prev, digest string }{
		{"xyz", digest}, {audit.Genesis, "abc"}, {audit.Genesis[:62], digest},
	} {
		if _, err := audit.HashV2(bad.prev, bad.digest); err == nil {
			t.Fatalf("HashV2(%q, %q) accepted malformed hex", bad.prev, bad.digest)
		}
	}
}
