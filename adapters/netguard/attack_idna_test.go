package netguard_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"testing"

	"github.com/arr-dev/arr/adapters/netguard"
)

// TestAttackHostAsNetHTTPDialsIt: net/http dials a URL's host after IDNA
// (UTS #46) mapping (transport.go canonicalAddr: idna.Lookup.ToASCII), so
// fullwidth digits, ideographic full stops and enclosed letters become
// 127.0.0.1 and localhost at dial time. ParseHost reads them as ordinary
// names, so CheckHost passes them and CreateMonitor accepts a URL that the
// delivery guard then refuses (the issue asks the check at creation to
// refuse what delivery would). Nothing connects: the transport's dialer
// only records the address it was asked for.
func TestAttackHostAsNetHTTPDialsIt(t *testing.T) {
	t.Parallel()
	g := netguard.New(netguard.Config{InterfaceAddrs: func() ([]netip.Addr, error) { return nil, nil }})
	for _, host := range []string{
		"\uff11\uff12\uff17.\uff10.\uff10.\uff11",                // １２７.０.０.１
		"127\u30020\u30020\u30021",                               // 127。0。0。1
		"\u24db\u24de\u24d2\u24d0\u24db\u24d7\u24de\u24e2\u24e3", // ⓛⓞⓒⓐⓛⓗⓞⓢⓣ
		"LOCALHOST\uff0e",                                        // LOCALHOST．
	} {
		u, err := url.Parse("http://" + host + "/hook")
		if err != nil {
			continue // not a URL at all: refused at creation
		}
		h, err := netguard.ParseHost(u.Hostname())
		if err != nil || g.CheckHost(h) != nil {
			continue // refused at creation: fine
		}
		var dialed string
		tr := &http.Transport{DialContext: func(_ context.Context, _, addr string) (net.Conn, error) {
			dialed = addr
			return nil, errors.New("not dialing")
		}}
		req, _ := http.NewRequest(http.MethodPost, u.String(), nil)
		_, _ = tr.RoundTrip(req)
		dh, _, _ := net.SplitHostPort(dialed)
		d, err := netguard.ParseHost(dh)
		if err != nil || g.CheckHost(d) != nil {
			t.Errorf("host %q passes ParseHost/CheckHost as %q, but net/http dials %q, which the guard refuses", host, h, dialed)
		}
	}
}
