package answer_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/domain/answer"
)

func TestParseRequest(t *testing.T) {
	tests := []struct {
		name          string
		q             string
		present       bool
		tier, mode    string
		code, field   string
		wantTier      answer.Tier
		wantMode      answer.Mode
		wantNormalize string
	}{
		{name: "missing", present: false, code: "q_missing", field: "q"},
		{name: "empty", q: "   ", present: true, code: "q_empty", field: "q"},
		{name: "too short", q: "ab", present: true, code: "q_too_short", field: "q"},
		{name: "punctuation only", q: "?!?!", present: true, code: "q_too_short", field: "q"},
		{name: "501 characters", q: strings.Repeat("é", 501), present: true, code: "q_too_long", field: "q"},
		{name: "500 characters", q: strings.Repeat("é", 500), present: true, wantTier: answer.Free, wantMode: answer.Quick, wantNormalize: strings.Repeat("é", 500)},
		{name: "tier gold", q: "what is bm25", present: true, tier: "gold", code: "invalid_tier", field: "tier"},
		{name: "mode slow", q: "what is bm25", present: true, mode: "slow", code: "invalid_mode", field: "mode"},
		{name: "defaults", q: "  What is BM25?  ", present: true, wantTier: answer.Free, wantMode: answer.Quick, wantNormalize: "what is bm25"},
		{name: "pro deep", q: "What is BM25", present: true, tier: "pro", mode: "deep", wantTier: answer.Pro, wantMode: answer.Deep, wantNormalize: "what is bm25"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := answer.ParseRequest(tc.q, tc.present, tc.tier, tc.mode)
			if tc.code != "" {
				var de *domain.Error
				if !errors.As(err, &de) || de.Code != tc.code || de.Field != tc.field || !errors.Is(err, domain.ErrInvalid) {
					t.Fatalf("err = %v, want %s on %s", err, tc.code, tc.field)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.Tier != tc.wantTier || r.Mode != tc.wantMode || r.Normalized != tc.wantNormalize {
				t.Fatalf("got %+v", r)
			}
		})
	}
}

func TestCacheKeyFoldsSpelling(t *testing.T) {
	a, _ := answer.ParseRequest("What is BM25?", true, "", "")
	b, _ := answer.ParseRequest("  what   is bm25 ", true, "free", "quick")
	c, _ := answer.ParseRequest("what is bm25", true, "pro", "")
	if a.CacheKey() != b.CacheKey() {
		t.Fatal("same question, different keys")
	}
	if a.CacheKey() == c.CacheKey() {
		t.Fatal("different tiers share a key")
	}
}

func TestAuthorize(t *testing.T) {
	deep, _ := answer.ParseRequest("what is bm25", true, "", "deep")
	pro, _ := answer.ParseRequest("what is bm25", true, "pro", "")
	quick, _ := answer.ParseRequest("what is bm25", true, "", "")
	if err := quick.Authorize(account.Free); err != nil {
		t.Fatal(err)
	}
	for _, r := range []answer.Request{deep, pro} {
		err := r.Authorize(account.Free)
		if !errors.Is(err, domain.ErrForbidden) || !strings.Contains(err.Error(), "Pro plan") {
			t.Fatalf("free %s/%s: %v", r.Tier, r.Mode, err)
		}
		if err := r.Authorize(account.Pro); err != nil {
			t.Fatal(err)
		}
		if err := r.Authorize(account.Starter); err == nil {
			t.Fatal("starter may not use pro or deep")
		}
	}
	high, low := quick, quick
	high.ContextSize, low.ContextSize = answer.ContextHigh, answer.ContextLow
	if err := high.Authorize(account.Free); !errors.Is(err, domain.ErrForbidden) || !strings.Contains(err.Error(), "search_context_size high") {
		t.Fatalf("free, search_context_size high: %v", err)
	}
	if err := high.Authorize(account.Pro); err != nil {
		t.Fatal(err)
	}
	if err := low.Authorize(account.Free); err != nil {
		t.Fatal(err)
	}
}

func TestCheckCitations(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		n       int
		want    string
		order   []int
		dropped int
	}{
		{"renumbers by first use", "B is true [3]. A too [1]. B again [3].", 3, "B is true [1]. A too [2]. B again [1].", []int{2, 0}, 0},
		{"drops unknown", "Fact [1] and fiction [7].", 2, "Fact [1] and fiction.", []int{0}, 1},
		{"groups", "Both [1, 2] and [2,9].", 2, "Both [1][2] and [2].", []int{0, 1}, 1},
		{"zero", "Nothing [0].", 2, "Nothing.", nil, 1},
		{"no markers", "Plain.", 2, "Plain.", nil, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := answer.CheckCitations(tc.text, tc.n)
			if c.Answer != tc.want || !reflect.DeepEqual(c.Order, tc.order) || c.Dropped != tc.dropped {
				t.Fatalf("got %+v", c)
			}
			for _, m := range answer.Markers(c.Answer) {
				if m < 1 || m > len(c.Order) {
					t.Fatalf("marker [%d] refers to nothing after checking", m)
				}
			}
		})
	}
}
