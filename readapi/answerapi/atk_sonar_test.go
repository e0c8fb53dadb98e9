package answerapi_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arr-dev/arr/readapi/answerapi"
)

const atkUser = `{"role":"user","content":"What powers the lamp of the north pier lighthouse?"}`

// TestAtkSonarDomainFilterNumericHosts: search_domain_filter takes
// "127.1", "2130706433" and "0x7f.1" as host names (NormalizeHost lets
// an all-digit or hex label pass), yet URL parsers read them as
// 127.0.0.1. A deny entry "-127.1" then denies nothing: a source on
// 127.0.0.1 is not "covered" by the string 127.1. Each must be refused
// or read as the address it names.
func TestAtkSonarDomainFilterNumericHosts(t *testing.T) {
	for _, n := range []string{"127.1", "2130706433", "0x7f.1", "0177.0.0.1"} {
		req, _, _, err := answerapi.ParseSonar(strings.NewReader(`{"model":"sonar","messages":[`+atkUser+`],"search_domain_filter":["-`+n+`"]}`), time.Now())
		if err == nil && !slices.Equal(req.Filters.ExcludeDomains, []string{"127.0.0.1"}) {
			t.Errorf("-%s: accepted as the name %v, which no source on 127.0.0.1 matches", n, req.Filters.ExcludeDomains)
		}
	}
}

// TestAtkSonarUnreadTextUnchecked: the text rule (valid UTF-8, no control
// characters) holds for every text arr takes, but a system or developer
// message's content, a message's name and the user field are not
// checked at all (they are "not used"): NUL and C1 controls pass. The
// body's strictness stops at them.
func TestAtkSonarUnreadTextUnchecked(t *testing.T) {
	for what, msgs := range map[string]string{
		"system content":    `{"role":"system","content":"be\u0000precise\u0085"},` + atkUser,
		"developer content": `{"role":"developer","content":[{"type":"text","text":"\u0000"}]},` + atkUser,
		"name":              `{"role":"user","name":"\u0000\u009b","content":"What powers the lamp of the north pier lighthouse?"}`,
	} {
		_, _, _, err := answerapi.ParseSonar(strings.NewReader(`{"model":"sonar","messages":[`+msgs+`]}`), time.Now())
		if err == nil {
			t.Errorf("%s with NUL and C1 controls: accepted", what)
		}
	}
	if _, _, _, err := answerapi.ParseSonar(strings.NewReader(`{"model":"sonar","messages":[`+atkUser+`],"user":"\u0000"}`), time.Now()); err == nil {
		t.Errorf("user with a NUL: accepted")
	}
}

// TestAtkSonarContentPartUnknownFields: a message with an unknown field
// is a 400 (unknown_field), but a content part with one
// ({"type":"text","text":"…","cache_control":{…}}) is accepted and the
// field dropped, so a client's instruction in a part is silently ignored
// ("a filter arr does not apply is refused, not ignored").
func TestAtkSonarContentPartUnknownFields(t *testing.T) {
	body := `{"model":"sonar","messages":[{"role":"user","content":[{"type":"text","text":"What powers the lamp?","cache_control":{"type":"ephemeral"}}]}]}`
	if _, _, _, err := answerapi.ParseSonar(strings.NewReader(body), time.Now()); err == nil {
		t.Fatalf("a content part with an unknown field: accepted")
	}
}

// TestAtkSonarTypeErrorMessage: a number out of float64's range is
// refused with "max_tokens must be a JSON number, got a number 1e400":
// the message contradicts itself (sonarDecodeError names the value's
// JSON kind and the field's Go kind the same way).
func TestAtkSonarTypeErrorMessage(t *testing.T) {
	_, _, _, err := answerapi.ParseSonar(strings.NewReader(`{"model":"sonar","messages":[`+atkUser+`],"max_tokens":1e400}`), time.Now())
	if err == nil || strings.Contains(err.Error(), "must be a JSON number, got a number") {
		t.Fatalf("max_tokens 1e400: %v", err)
	}
}
