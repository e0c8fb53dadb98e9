package httpx_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/readapi/httpx"
)

// TestCheckQuery: only the named parameters, each once, in a query string
// that parses.
func TestCheckQuery(t *testing.T) {
	tests := []struct {
		name, query string
		names       []string
		field, says string // "" field and says: accepted
	}{
		{"none", "", nil, "", ""},
		{"known", "bbox=1,2,3,4&limit=5", []string{"bbox", "limit", "cursor"}, "", ""},
		{"empty value", "limit=", []string{"limit"}, "", ""},
		{"unknown", "bbox=1,2,3,4&colour=red", []string{"bbox"}, "colour", "unknown query parameter \"colour\": this route takes only bbox"},
		{"misspelt", "ofset=10", []string{"limit", "offset"}, "ofset", "takes only limit, offset"},
		{"none taken", "x=1", nil, "x", "takes no query parameters"},
		{"repeated", "bbox=1&bbox=2", []string{"bbox"}, "bbox", "given 2 times"},
		{"repeated empty", "limit&limit", []string{"limit"}, "limit", "given 2 times"},
		{"first in sorted order", "zeta=1&alpha=2", nil, "alpha", "alpha"},
		{"bad escape", "bbox=%zz", []string{"bbox"}, "", "cannot be read"},
		{"semicolon", "a=1;b=2", []string{"a", "b"}, "", "cannot be read"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := httpx.CheckQuery(tc.query, tc.names...)
			if tc.says == "" {
				if err != nil {
					t.Fatalf("CheckQuery(%q) = %v, want nil", tc.query, err)
				}
				return
			}
			var de *domain.Error
			if !errors.As(err, &de) || !errors.Is(err, domain.ErrInvalid) || de.Code != "invalid_query_parameter" || de.Field != tc.field || !strings.Contains(de.Message, tc.says) {
				t.Fatalf("CheckQuery(%q) = %v, want invalid_query_parameter on %q saying %q", tc.query, err, tc.field, tc.says)
			}
		})
	}
}

func TestCheckQueryLists(t *testing.T) {
	t.Parallel()
	lists, names := []string{"include_domains"}, []string{"q", "include_domains"}
	for _, tc := range []struct{ raw, field string }{
		{"q=a&include_domains=x&include_domains=y", ""},
		{"q=a&q=b", "q"},
		{"q=a&qq=b", "qq"},
	} {
		err := httpx.CheckQueryLists(tc.raw, lists, names...)
		var de *domain.Error
		if tc.field == "" && err != nil || tc.field != "" && (!errors.As(err, &de) || de.Field != tc.field || de.Code != "invalid_query_parameter") {
			t.Errorf("CheckQueryLists(%q) = %v, want field %q", tc.raw, err, tc.field)
		}
	}
}
