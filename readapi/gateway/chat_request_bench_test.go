package gateway

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/arr-dev/arr/readapi/httpx"
)

// BenchmarkParseChatRequest measures the gateway's parse of a chat body
// (which includes httpx.UniqueKeys) next to UniqueKeys alone, so the share
// of the duplicate-key check in the hot path is the ratio of the two.
func BenchmarkParseChatRequest(b *testing.B) {
	turn := strings.Repeat("lorem ipsum dolor sit amet, ", 37)
	for _, size := range []int{4 << 10, 64 << 10, 1 << 20, 4 << 20} {
		var msgs []map[string]any
		for n := 0; n < size; n += len(turn) + 40 {
			msgs = append(msgs, map[string]any{"role": []string{"user", "assistant"}[len(msgs)%2], "content": turn})
		}
		body, _ := json.Marshal(map[string]any{"model": "auto", "messages": msgs, "temperature": 0.2, "max_tokens": 500})
		b.Run(fmt.Sprintf("parse/%dKiB", size>>10), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if _, err := parseChatRequest(body); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("UniqueKeys/%dKiB", size>>10), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if err := httpx.UniqueKeys(body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
