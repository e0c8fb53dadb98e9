package audit_test

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain/audit"
)

func TestChainLinksAndVerifies(t *testing.T) {
	prev := audit.Genesis
	var chain []*audit.CompletionRecorded
	for i := 0; i < 5; i++ {
		p, err := audit.Canonical(audit.Completion{AccountID: uuid.New(), Tier: "nano", Model: "m", PromptTokens: int64(i), StartedAt: time.Unix(1700000000, 0).In(time.FixedZone("X", 3600))})
		if err != nil {
			t.Fatal(err)
		}
		e, err := audit.Link(uint64(i), prev, p)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := hex.DecodeString(prev)
		digest := sha256.Sum256(p)
		want := sha256.Sum256(append(raw, digest[:]...))
		if e.Hash != hex.EncodeToString(want[:]) || e.Link != audit.LinkV2 {
			t.Fatalf("hash is not SHA-256(prev ‖ SHA-256(payload)) with link 2: %+v", e)
		}
		if !strings.Contains(string(p), `"started_at":"2023-11-14T22:13:20Z"`) {
			t.Fatalf("payload time is not canonical UTC: %s", p)
		}
		chain = append(chain, e)
		prev = e.Hash
	}
	prev = audit.Genesis
	for i, e := range chain {
		if err := audit.Verify(e, prev, uint64(i)); err != nil {
			t.Fatalf("entry %d: %v", i, err)
		}
		prev = e.Hash
	}
	cases := []struct {
		name   string
		mutate func(e *audit.CompletionRecorded)
		want   string
	}{
		{"payload changed", func(e *audit.CompletionRecorded) {
			e.Payload = []byte(strings.Replace(string(e.Payload), `"prompt_tokens":2`, `"prompt_tokens":3`, 1))
		}, "does not match SHA-256"},
		{"link changed", func(e *audit.CompletionRecorded) { e.PrevHash = strings.Repeat("1", 64) }, "prev_hash"},
		{"payload reformatted", func(e *audit.CompletionRecorded) { e.Payload = append([]byte(" "), e.Payload...) }, "canonical"},
		{"sequence changed", func(e *audit.CompletionRecorded) { e.Seq = 7 }, "sequence"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := *chain[2]
			tc.mutate(&e)
			err := audit.Verify(&e, chain[1].Hash, 2)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Verify = %v, want an error about %q", err, tc.want)
			}
		})
	}
}
