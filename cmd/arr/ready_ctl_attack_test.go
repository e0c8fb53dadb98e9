package main

import (
	"io"
	"log/slog"
	"strings"
	"testing"
	"unicode"
)

// TestReadyMessageCarriesNoControlSequences: the ready message is written
// raw to the operator's terminal, and its URLs come from
// ARR_PUBLIC_BASE_URL. A base URL arr accepts must not put a terminal
// control sequence (C0/C1 controls such as ESC or CSI U+009B) or an
// invisible bidi override (U+202E, which makes the printed curl line read
// otherwise than what a paste runs) into that message.
func TestReadyMessageCarriesNoControlSequences(t *testing.T) {
	for _, tc := range []struct{ name, base string }{
		{"ESC in the host", "http://a\x1b]0;pwned\x07b.test"},
		{"C1 CSI in the path", "http://127.0.0.1:8081/\u009b2J"},
		{"C1 CSI in the host", "http://a\u009b2Jb.test"},
		{"bidi override in the host", "http://a\u202etset.b"},
		{"bidi override in the path", "http://127.0.0.1:8081/\u202ex"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := configFrom(map[string]string{"ARR_PUBLIC_BASE_URL": tc.base})
			if err != nil {
				t.Logf("refused at config, as it should be: %v", err)
				return
			}
			log := slog.New(slog.NewTextHandler(io.Discard, nil))
			bases := map[string]string{}
			for _, svc := range []string{"answer", "gateway", "records"} {
				site, err := cfg.site(svc, "127.0.0.1:8081", log)
				if err != nil {
					t.Logf("refused for %s, as it should be: %v", svc, err)
					return
				}
				bases[svc] = site.BaseURL()
			}
			msg := readiness{bases: bases, self: "arr", upstream: true}.message()
			if i := strings.IndexFunc(msg, func(r rune) bool {
				return r != '\n' && (unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r))
			}); i >= 0 {
				t.Fatalf("ARR_PUBLIC_BASE_URL=%q is accepted and puts %U into the ready message printed raw to the terminal:\n%q", tc.base, []rune(msg[i:])[0], msg)
			}
		})
	}
}
