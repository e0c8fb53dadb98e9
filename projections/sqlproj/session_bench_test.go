package sqlproj_test

import (
	"context"
	"testing"

	"github.com/arr-dev/arr/projections/sqlproj"
)

// BenchmarkLiveBatch is one live batch of one event of a SQL projection:
// read the checkpoint, open its transaction (since issue 36, a session
// that logs in as the projection's role), apply, advance, commit.
func BenchmarkLiveBatch(b *testing.B) {
	h := newHarness(b, sqlproj.Config{})
	p := h.define(b, spendSQL(b))
	ctx := context.Background()
	h.waitFor(b, p.Name, h.completion(b, "m", 1))
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		h.completion(b, "m", 1)
		b.StartTimer()
		if _, n, err := h.runner.Step(ctx, p.Name); err != nil || n != 1 {
			b.Fatalf("step: %d, %v", n, err)
		}
	}
}

// BenchmarkScramVerifier is the PBKDF2 of one SCRAM-SHA-256 password at
// 4096 iterations: what a client computes at each login as a role (and
// arr once per verifier it sets).
func BenchmarkScramVerifier(b *testing.B) {
	for range b.N {
		if _, err := sqlproj.ScramVerifier("a-password-of-43-characters-as-arr-derives"); err != nil {
			b.Fatal(err)
		}
	}
}
