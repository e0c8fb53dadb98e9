package httpx_test

import (
	"testing"

	"github.com/arr-dev/arr/readapi/httpx"
)

func TestDefaultBaseURL(t *testing.T) {
	tests := []struct {
		name        string
		listen      string
		want        string
		unspecified bool
		wantErr     bool
	}{
		{name: "loopback stays", listen: "127.0.0.1:8081", want: "http://127.0.0.1:8081"},
		{name: "IPv6 loopback in brackets", listen: "[::1]:8082", want: "http://[::1]:8082"},
		{name: "a name stays a name", listen: "arr.lan:8083", want: "http://arr.lan:8083"},
		{name: "a LAN address stays", listen: "192.0.2.10:8081", want: "http://192.0.2.10:8081"},
		{name: "0.0.0.0 becomes 127.0.0.1", listen: "0.0.0.0:8081", want: "http://127.0.0.1:8081", unspecified: true},
		{name: "empty host becomes 127.0.0.1", listen: ":8082", want: "http://127.0.0.1:8082", unspecified: true},
		{name: ":: becomes ::1", listen: "[::]:8083", want: "http://[::1]:8083", unspecified: true},
		{name: "no port", listen: "127.0.0.1", wantErr: true},
		{name: "empty port", listen: "127.0.0.1:", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, unspecified, err := httpx.DefaultBaseURL(tc.listen)
			if (err != nil) != tc.wantErr {
				t.Fatalf("DefaultBaseURL(%q) error %v, want error %v", tc.listen, err, tc.wantErr)
			}
			if got != tc.want || unspecified != tc.unspecified {
				t.Fatalf("DefaultBaseURL(%q) = %q, %v; want %q, %v", tc.listen, got, unspecified, tc.want, tc.unspecified)
			}
		})
	}
}

func TestSiteAllows(t *testing.T) {
	tests := []struct {
		name   string
		base   string
		listen []string
		allow  []string
		refuse []string
	}{
		{
			name: "default on loopback", base: "http://127.0.0.1:8081", listen: []string{"127.0.0.1:8081"},
			allow:  []string{"127.0.0.1:8081", "localhost:8081", "LOCALHOST:8081", "[::1]:8081"},
			refuse: []string{"evil.example", "evil.example:8081", "127.0.0.1", "127.0.0.1:8082", "127.0.0.1:80", "", "127.0.0.1:8081@evil.example"},
		},
		{
			name: "default from an all-interfaces listener", base: "http://127.0.0.1:8082", listen: []string{"0.0.0.0:8082"},
			allow:  []string{"127.0.0.1:8082", "localhost:8082"},
			refuse: []string{"0.0.0.0:8082", "192.0.2.10:8082", "evil.example:8082"},
		},
		{
			name: "https public name behind a proxy", base: "https://Gateway.Arr.Example/", listen: []string{"127.0.0.1:8082"},
			allow:  []string{"gateway.arr.example", "gateway.arr.example:443", "GATEWAY.arr.example.", "127.0.0.1:8082"},
			refuse: []string{"gateway.arr.example:80", "gateway.arr.example:8082", "arr.example", "evil.example", "gateway.arr.example.evil.example"},
		},
		{
			name: "http public name with a port", base: "http://records.arr.example:8083/base", listen: []string{"records.arr.example:8083"},
			allow:  []string{"records.arr.example:8083"},
			refuse: []string{"records.arr.example", "records.arr.example:80"},
		},
		{
			name: "IPv6 base", base: "http://[2001:db8::5]", listen: nil,
			allow:  []string{"[2001:db8::5]", "[2001:db8::5]:80", "[2001:DB8::5]"},
			refuse: []string{"[2001:db8::6]", "2001:db8::5:80"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := httpx.NewSite(tc.base, tc.listen...)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range tc.allow {
				if !s.Allows(h) {
					t.Errorf("Allows(%q) = false, want true (hosts %v)", h, s.Hosts())
				}
			}
			for _, h := range tc.refuse {
				if s.Allows(h) {
					t.Errorf("Allows(%q) = true, want false (hosts %v)", h, s.Hosts())
				}
			}
		})
	}
}

func TestNewSite(t *testing.T) {
	tests := []struct {
		name    string
		base    string
		listen  []string
		want    string
		wantErr bool
	}{
		{name: "trailing slash dropped", base: "https://gateway.arr.example/", want: "https://gateway.arr.example"},
		{name: "path kept", base: "https://arr.example/gateway/", want: "https://arr.example/gateway"},
		{name: "relative", base: "/account", wantErr: true},
		{name: "not http", base: "ftp://arr.example", wantErr: true},
		{name: "query", base: "https://arr.example/?a=b", wantErr: true},
		{name: "user info", base: "https://me@arr.example", wantErr: true},
		{name: "bad listen address", base: "https://arr.example", listen: []string{"8081"}, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := httpx.NewSite(tc.base, tc.listen...)
			if (err != nil) != tc.wantErr {
				t.Fatalf("NewSite(%q) error %v, want error %v", tc.base, err, tc.wantErr)
			}
			if s.BaseURL() != tc.want {
				t.Fatalf("BaseURL() = %q, want %q", s.BaseURL(), tc.want)
			}
		})
	}
	if (httpx.Site{}).Allows("127.0.0.1:8081") {
		t.Fatal("the zero Site allows a host")
	}
}
