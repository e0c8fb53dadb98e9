package answerapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/domain"
)

// TestSonarErrorShape: on /v1/chat/completions the one error responder
// writes every status in the OpenAI/Perplexity shape (type the code, code
// the status as a number, param the field); on /api/v1/answer arr's own.
func TestSonarErrorShape(t *testing.T) {
	gin.SetMode(gin.TestMode)
	for _, tc := range []struct {
		err    error
		status int
		typ    string
		param  string
	}{
		{domain.Invalid("invalid_model", "model", "model %q is not known", "x"), 400, "invalid_model", "model"},
		{domain.Forbidden("pro_plan_required", "needs the Pro plan"), 403, "pro_plan_required", ""},
		{domain.RateLimited("daily_call_limit_reached", "the daily limit is reached"), 429, "daily_call_limit_reached", ""},
		{&domain.Error{Kind: domain.ErrUnavailable, Code: "search_unavailable", Message: "web search is down"}, 503, "search_unavailable", ""},
	} {
		w := httptest.NewRecorder()
		c, _ := gin.CreateTestContext(w)
		c.Request = httptest.NewRequest(http.MethodPost, sonarPath, nil)
		fail(c, tc.err)
		var body struct {
			Error map[string]any `json:"error"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || w.Code != tc.status {
			t.Fatalf("%v: %d %s", tc.err, w.Code, w.Body.Bytes())
		}
		e := body.Error
		if e["type"] != tc.typ || e["code"] != float64(tc.status) || e["message"] == "" || (tc.param != "" && e["param"] != tc.param) || (tc.param == "" && e["param"] != nil) || e["status"] != nil {
			t.Fatalf("%v: %s", tc.err, w.Body.Bytes())
		}
		w = httptest.NewRecorder()
		c, _ = gin.CreateTestContext(w)
		c.Request = httptest.NewRequest(http.MethodPost, "/api/v1/answer", nil)
		fail(c, tc.err)
		if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || body.Error["code"] != tc.typ || body.Error["status"] != float64(tc.status) {
			t.Fatalf("answer API %v: %s", tc.err, w.Body.Bytes())
		}
	}
}
