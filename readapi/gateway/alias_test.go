package gateway

import (
	"errors"
	"testing"

	"github.com/arr-dev/arr/domain"
)

// A top-level name that case-folds onto a field the gateway reads,
// without being it, is refused: the gateway reads fields by exact name
// and relays the rest, and an upstream whose parser folds names (Go's
// encoding/json: ASCII case, the Kelvin sign for k, the long s for s)
// would read it as the field, uncapped and unchecked. Other unknown
// fields still pass, as sent.
func TestAliasedFieldRefused(t *testing.T) {
	for _, body := range []string{
		`{"model":"auto","messages":[{"role":"user","content":"hi"}],"MAX_TOKENS":100000}`,
		`{"model":"auto","messages":[{"role":"user","content":"hi"}],"max_to\u212aens":100000}`,
		`{"model":"auto","messages":[{"role":"user","content":"hi"}],"stream":true,"stream_option\u017f":null}`,
		`{"model":"auto","messages":[{"role":"user","content":"hi"}],"Quality_Floor":0}`,
		`{"model":"auto","messages":[{"role":"user","content":"hi"}],"Max_To\u212aens":1}`,
	} {
		_, err := parseChatRequest([]byte(body))
		var de *domain.Error
		if !errors.As(err, &de) || de.Code != "aliased_field" {
			t.Errorf("%s: %v, want a 400 aliased_field", body, err)
		}
	}
	if _, err := parseChatRequest([]byte(`{"model":"auto","messages":[{"role":"user","content":"hi"}],"max_tokens":10,"seed":1,"x_custom":true}`)); err != nil {
		t.Fatalf("exact and unknown fields: %v", err)
	}
}
