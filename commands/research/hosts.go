package research

import (
	"net/url"
	"strings"

	"golang.org/x/net/idna"

	"github.com/arr-dev/arr/domain/answer"
)

// ASCIIName is a host name as a client wrote it, an internationalized one
// (bücher.de) in its ASCII form (xn--bcher-kva.de), ready for
// answer.ParseFilters; a name idna refuses is returned as written, for
// ParseFilters to refuse.
func ASCIIName(name string) string {
	n := strings.TrimSpace(name)
	for i := 0; i < len(n); i++ {
		if n[i] >= 0x80 {
			a, err := idna.Lookup.ToASCII(n)
			if err != nil {
				return name
			}
			return a
		}
	}
	return n
}

// HostOf is the host of an absolute URL as the filters compare it: no
// port, lower case, an internationalized name in its ASCII form
// (answer.NormalizeHost); "" when it has none.
func HostOf(rawURL string) string {
	if rawURL == "" {
		return ""
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return ""
	}
	h, ok := answer.NormalizeHost(ASCIIName(u.Hostname()))
	if !ok {
		return ""
	}
	return h
}
