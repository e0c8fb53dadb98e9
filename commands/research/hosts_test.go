package research_test

import (
	"testing"
	"time"

	"github.com/arr-dev/arr/commands/research"
	"github.com/arr-dev/arr/domain/answer"
)

// TestFiltersOnURLs: the domain filters compare a name, as a client wrote
// it, with a source URL's host: lower-cased, without port or user info,
// internationalized names in their ASCII form either way.
func TestFiltersOnURLs(t *testing.T) {
	tests := []struct {
		name, list, url string
		want            bool
	}{
		{"a subdomain", "example.com", "https://docs.example.com/a", true},
		{"a look-alike", "example.com", "https://evil-example.com/", false},
		{"a name inside another host", "example.com", "https://example.com.evil.org/", false},
		{"upper case URL", "example.com", "HTTPS://DOCS.EXAMPLE.COM/", true},
		{"upper case name", "Example.COM", "https://docs.example.com/", true},
		{"a port is ignored", "example.com", "https://example.com:8443/x", true},
		{"user info is not the host", "example.com", "https://example.com@evil.org/", false},
		{"an IDN name, a punycode host", "bücher.de", "https://www.xn--bcher-kva.de/", true},
		{"a punycode name, an IDN host", "xn--bcher-kva.de", "https://bücher.de/", true},
		{"an upper-case IDN name", "BÜCHER.de", "https://bücher.de/", true},
		{"an IP with a port", "127.0.0.1", "http://127.0.0.1:8080/p", true},
		{"localhost", "localhost", "http://localhost:9/x", true},
		{"IPv6", "::1", "http://[::1]:80/", true},
		{"a relative URL has no host", "example.com", "/docs/abc", false},
		{"garbage", "example.com", "http://%zz/", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in, err := answer.ParseFilters(answer.FilterInput{IncludeDomains: []string{research.ASCIIName(tc.list)}}, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			if got := in.AllowsHost(research.HostOf(tc.url)); got != tc.want {
				t.Fatalf("include %q, %s (host %q): %v, want %v", tc.list, tc.url, research.HostOf(tc.url), got, tc.want)
			}
			ex, _ := answer.ParseFilters(answer.FilterInput{ExcludeDomains: []string{research.ASCIIName(tc.list)}}, time.Now())
			if got := ex.AllowsHost(research.HostOf(tc.url)); got == tc.want {
				t.Fatalf("exclude %q, %s: %v", tc.list, tc.url, got)
			}
		})
	}
}
