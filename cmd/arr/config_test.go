package main

import (
	"errors"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// documentedVariables are the variables the configuration table of
// docs/configuration.md names (a row may name several:
// "`ARR_CACHE_ENTRIES`, `ARR_CACHE_TTL`").
func documentedVariables(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "| variable | default |")
	if !ok {
		t.Fatal("docs/configuration.md has no table of variables")
	}
	table, _, _ = strings.Cut(table, "\n## ")
	name := regexp.MustCompile("`([A-Z][A-Z0-9_]+)`")
	var out []string
	for _, line := range strings.Split(table, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		first, _, _ := strings.Cut(strings.TrimPrefix(line, "|"), "|")
		for _, m := range name.FindAllStringSubmatch(first, -1) {
			out = append(out, m[1])
		}
	}
	if len(out) < 30 {
		t.Fatalf("found only %d variables in docs/configuration.md's table", len(out))
	}
	return out
}

// configFrom binds a Config to env as arr does and validates it.
func configFrom(env map[string]string) (*Config, error) {
	var c Config
	c.bind(pflag.NewFlagSet("arr", pflag.ContinueOnError), func(k string) string { return env[k] })
	return &c, c.Validate()
}

// badValues are, per kind of setting, values arr must refuse.
func badValues(s setting) []string {
	switch {
	case s.num != nil:
		return []string{"5k", "1e4", "abc", "12.5", " 7", "-1"}
	case s.dur != nil:
		return []string{"20", "abc", "-1s", "1 h"}
	case s.choices != nil:
		return []string{"bogus", strings.ToUpper(s.choices[0]), " " + s.choices[0]}
	}
	return nil
}

// TestConfigEveryVariable: every variable docs/configuration.md
// documents is a setting and every setting is documented; the defaults
// validate; each bad value of a number, a duration or a choice is refused
// with an error naming the variable, the value and the accepted form, and
// several bad values are all reported at once.
func TestConfigEveryVariable(t *testing.T) {
	var c Config
	settings := c.settings()
	known := map[string]setting{}
	for _, s := range settings {
		known[s.env] = s
	}
	documented := documentedVariables(t)
	for _, v := range documented {
		if _, ok := known[v]; !ok {
			t.Errorf("docs/configuration.md documents %s, which arr does not read", v)
		}
	}
	for _, s := range settings {
		if !slices.Contains(documented, s.env) && s.env != "ARR_TEST_CLOCK_FILE" {
			t.Errorf("%s is not in docs/configuration.md's table", s.env)
		}
	}
	if _, err := configFrom(nil); err != nil {
		t.Fatalf("the defaults do not validate: %v", err)
	}
	var all = map[string]string{}
	for _, s := range settings {
		for _, bad := range badValues(s) {
			_, err := configFrom(map[string]string{s.env: bad})
			var ce ConfigErrors
			if !errors.As(err, &ce) || len(ce) != 1 {
				t.Errorf("%s=%q: got %v, want one configuration error", s.env, bad, err)
				continue
			}
			msg := ce[0].Error()
			if !strings.HasPrefix(msg, s.env+"=") || !strings.Contains(msg, strings.Trim(strconvQuote(bad), `"`)) || !strings.Contains(msg, "want ") {
				t.Errorf("%s=%q: the error %q does not name the variable, the value and the accepted form", s.env, bad, msg)
			}
			all[s.env] = bad
		}
	}
	// Every bad value at once: one error each.
	_, err := configFrom(all)
	var ce ConfigErrors
	if !errors.As(err, &ce) || len(ce) != len(all) {
		t.Fatalf("%d bad values: got %d errors: %v", len(all), len(ce), err)
	}
	// Values that validate only together, and free-form ones with a form.
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"ARR_EVENTSTORE": "kurrentdb"}, "KURRENTDB_URL="},
		{map[string]string{"ARR_SEARCH": "searxng"}, "SEARXNG_URL="},
		{map[string]string{"ARR_SEARCH": "searxng", "SEARXNG_URL": "ftp://x"}, `SEARXNG_URL="ftp://x"`},
		{map[string]string{"ARR_PUBLIC_BASE_URL": "https://user@x.example/"}, `ARR_PUBLIC_BASE_URL="https://user@x.example/"`},
		{map[string]string{"ARR_TRUSTED_PROXIES": "10.0.0.0/33"}, `ARR_TRUSTED_PROXIES="10.0.0.0/33"`},
		{map[string]string{"ARR_AUDITOR_KEY": "short-secret"}, "ARR_AUDITOR_KEY (flag --arr-auditor-key): want at least 32 characters"},
		{map[string]string{"ARR_READ_DATABASE_URL": "postgres://arr:short-secret@replica:notaport/arr"}, "ARR_READ_DATABASE_URL (flag --arr-read-database-url): want a PostgreSQL URL"},
	} {
		_, err := configFrom(tc.env)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want an error containing %q", tc.env, err, tc.want)
		}
		if strings.Contains(fmtErr(err), "short-secret") {
			t.Errorf("a secret is shown in %q", err)
		}
	}
	// Good values parse to what they say.
	cfg, err := configFrom(map[string]string{"ARR_PROJECTION_BATCH_SIZE": "500", "ARR_CACHE_ENTRIES": "0", "ARR_UPSTREAM_TIMEOUT": "1m30s", "ARR_LOG_LEVEL": "debug"})
	if err != nil || cfg.BatchSize != 500 || cfg.CacheEntries != 0 || cfg.UpstreamTimeout.Seconds() != 90 || cfg.LogLevel != "debug" {
		t.Fatalf("good values: %v %+v", err, cfg)
	}
}

func strconvQuote(s string) string { return strings.ReplaceAll(s, `"`, `\"`) }

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
