package anthropic_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/arr-dev/arr/adapters/upstream/translate/anthropic"
	wire "github.com/arr-dev/arr/domain/anthropic"
)

// TestTranslateError: an Anthropic error reply keeps its status (529 as
// 503) and becomes OpenAI's error shape, Anthropic's kind as the code.
func TestTranslateError(t *testing.T) {
	for _, tc := range []struct {
		status int
		kind   string
		want   int
		typ    string
	}{
		{400, wire.ErrorInvalidRequest, 400, "invalid_request_error"},
		{401, wire.ErrorAuthentication, 401, "authentication_error"},
		{403, wire.ErrorPermission, 403, "permission_error"},
		{404, wire.ErrorNotFound, 404, "not_found_error"},
		{413, wire.ErrorRequestTooLarge, 413, "invalid_request_error"},
		{429, wire.ErrorRateLimit, 429, "rate_limit_error"},
		{500, wire.ErrorAPI, 500, "api_error"},
		{529, wire.ErrorOverloaded, 503, "service_unavailable_error"},
	} {
		e := anthropic.TranslateError(tc.status, wire.NewError(tc.kind, "msg <x>"))
		var body struct {
			Error struct {
				Message string  `json:"message"`
				Type    string  `json:"type"`
				Param   *string `json:"param"`
				Code    string  `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal(e.Body, &body); err != nil {
			t.Fatalf("%s: %v", e.Body, err)
		}
		if e.Status != tc.want || e.UpstreamStatus != tc.status || e.Type != tc.kind || body.Error.Type != tc.typ ||
			body.Error.Code != tc.kind || body.Error.Message != "msg <x>" || body.Error.Param != nil {
			t.Errorf("%d %s: %+v %s", tc.status, tc.kind, e, e.Body)
		}
	}
	// A body that is not Anthropic's: the status kept, a message saying so.
	e := anthropic.TranslateError(http.StatusBadGateway, []byte(`<html>bad gateway</html>`))
	if e.Status != http.StatusBadGateway || e.Type != "" || string(e.Body) != `{"error":{"message":"the Anthropic upstream answered HTTP 502","type":"api_error","param":null,"code":null}}` {
		t.Errorf("%+v %s", e, e.Body)
	}
	if e := anthropic.TranslateError(200, nil); e.Status != http.StatusBadGateway {
		t.Errorf("a 200 error is %d", e.Status)
	}
}
