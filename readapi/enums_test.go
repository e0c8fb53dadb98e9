package readapi_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/arr-dev/arr/adapters/replica"
	"github.com/arr-dev/arr/commands/billing"
	"github.com/arr-dev/arr/commands/complete"
	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/domain/answer"
	"github.com/arr-dev/arr/domain/audit"
	"github.com/arr-dev/arr/domain/guardrail"
	"github.com/arr-dev/arr/domain/records"
	"github.com/arr-dev/arr/domain/routing"
	"github.com/arr-dev/arr/projections/guardrails"
	"github.com/arr-dev/arr/projections/lists"
	"github.com/arr-dev/arr/projections/monitors"
	"github.com/arr-dev/arr/projections/parcels"
	"github.com/arr-dev/arr/readapi/answerapi"
	"github.com/arr-dev/arr/readapi/gateway"
	"github.com/arr-dev/arr/readapi/gateway/messages"
	"github.com/arr-dev/arr/readapi/recordsapi"
)

// enumSource is where the values of an OpenAPI enum come from: the
// domain's (or a command's) constants where arr owns them, or, for values
// an outside protocol fixes (OpenAI's wire format, query flags), the list
// the parsing code accepts, with from naming that code.
type enumSource struct {
	values []string
	from   string
}

func of[T ~string](xs ...T) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = string(x)
	}
	return out
}

// paidPlans are the plans one can buy: every plan but Free; selfServe
// those of them Checkout sells (enterprise goes through sales).
func paidPlans(selfServe bool) []string {
	var out []string
	for _, o := range account.Catalog() {
		if o.Plan != account.Free && (o.SelfServe || !selfServe) {
			out = append(out, string(o.Plan))
		}
	}
	return out
}

// enumSources ties each enum, by its place in a document (a parameter by
// its name), to its source. A new enum goes here with the constant it
// stands for; the same place in several services' documents means the
// same thing.
var enumSources = map[string]enumSource{
	"paths//api/v1/monitors/get/responses/200/content/application/json/schema/properties/data/items/properties/status":                                            {of(monitors.StatusActive, monitors.StatusDisabled, monitors.StatusDeleted), "projections/monitors Status constants"},
	"paths//api/v1/monitors/{id}/deliveries/get/parameters/status/schema":                                                                                         {of(parcels.DeliveryPending, parcels.DeliveryDelivered, parcels.DeliveryFailed, parcels.DeliveryCancelled), "projections/parcels Delivery status constants"},
	"paths//api/v1/monitors/{id}/deliveries/get/responses/200/content/application/json/schema/properties/data/items/properties/status":                            {of(parcels.DeliveryPending, parcels.DeliveryDelivered, parcels.DeliveryFailed, parcels.DeliveryCancelled), "projections/parcels Delivery status constants"},
	"paths//api/v1/monitors/{id}/deliveries/get/responses/200/content/application/json/schema/properties/data/items/properties/type":                              {of(parcels.SignalAdded, parcels.SignalRemoved), "projections/parcels webhook type constants"},
	"paths//api/v1/monitors/{id}/deliveries/get/responses/200/content/application/json/schema/properties/data/items/properties/attempts/items/properties/outcome": {of(records.OutcomeDelivered, records.OutcomeRetrying, records.OutcomeFailed), "domain/records Outcome constants"},
	"components/schemas/Health/properties/read_replica/properties/status":                                                                                         {of(replica.StateOK, replica.StateLagging, replica.StateDown, replica.StateNotInRecovery, replica.StateStarting), "adapters/replica State constants"},
	"components/schemas/Health/properties/read_replica/properties/reads":                                                                                          {of(replica.ReadsReplica, replica.ReadsPrimary), "adapters/replica Reads constants"},
	"paths//api/v1/ogc/collections/{collectionId}/items/get/parameters/filter-lang/schema":                                                                        {recordsapi.FilterLangs(), "readapi/recordsapi.FilterLangs()"},
	"components/schemas/LayerKey":                                                                              {of(records.LayerKeys()...), "domain/records.LayerKeys()"},
	"components/schemas/ApiKey/properties/account/properties/plan":                                             {of(account.Plans()...), "domain/account.Plans()"},
	"components/schemas/BudgetPeriod":                                                                          {of(account.Periods()...), "domain/account.Periods()"},
	"components/schemas/MeAccount/properties/plan":                                                             {of(account.Plans()...), "domain/account.Plans()"},
	"components/schemas/PlanOffer/properties/id":                                                               {of(account.Plans()...), "domain/account.Plans()"},
	"components/schemas/CheckoutRequest/properties/plan":                                                       {paidPlans(true), "domain/account.Catalog(): self-serve paid plans"},
	"components/schemas/PublicCheckoutRequest/properties/plan":                                                 {paidPlans(false), "domain/account.Catalog(): paid plans"},
	"paths//account/upgrade/post/requestBody/content/application/x-www-form-urlencoded/schema/properties/plan": {paidPlans(true), "domain/account.Catalog(): self-serve paid plans"},
	"components/schemas/ModelList/properties/data/items/properties/api":                                        {of(routing.APIOpenAI, routing.APIAnthropic, routing.APIGemini, routing.APIBedrock, routing.APIAzureOpenAI, routing.APIVertex), "domain/routing API constants"},
	"components/schemas/Routing/properties/tier":                                                               {routing.TierNames(), "domain/routing.TierNames()"},
	"components/schemas/Feedback/properties/difficulty_band":                                                   {of(routing.BandLow, routing.BandMid, routing.BandHigh), "domain/routing Band constants"},
	"components/schemas/SonarRequest/properties/model":                                                         {of(answerapi.SonarModels()...), "readapi/answerapi.SonarModels()"},
	"components/schemas/SonarRequest/properties/search_recency_filter":                                         {of(answerapi.SonarRecencies()...), "readapi/answerapi.SonarRecencies()"},
	"components/schemas/SonarRequest/properties/web_search_options/properties/search_context_size":             {of(answer.ContextLow, answer.ContextMedium, answer.ContextHigh), "domain/answer ContextSize constants"},
	"components/schemas/SonarCompletion/properties/usage/properties/search_context_size":                       {of(answer.ContextLow, answer.ContextMedium, answer.ContextHigh), "domain/answer ContextSize constants"},
	"components/schemas/Answer/properties/mode":                                                                {of(answer.Quick, answer.Deep), "domain/answer Mode constants"},
	"components/schemas/AnswerRequest/properties/mode":                                                         {of(answer.Quick, answer.Deep), "domain/answer Mode constants"},
	"paths//api/v1/answer/get/parameters/mode/schema":                                                          {of(answer.Quick, answer.Deep), "domain/answer Mode constants"},
	"components/schemas/Answer/properties/tier":                                                                {of(answer.Free, answer.Pro), "domain/answer Tier constants"},
	"components/schemas/AnswerRequest/properties/tier":                                                         {of(answer.Free, answer.Pro), "domain/answer Tier constants"},
	"paths//api/v1/answer/get/parameters/tier/schema":                                                          {of(answer.Free, answer.Pro), "domain/answer Tier constants"},
	"paths//api/v1/answer/get/parameters/time_range/schema":                                                    {of(answer.PastDay, answer.PastWeek, answer.PastMonth, answer.PastYear), "domain/answer TimeRange constants"},
	"components/schemas/AnswerRequest/properties/time_range":                                                   {of(answer.PastDay, answer.PastWeek, answer.PastMonth, answer.PastYear), "domain/answer TimeRange constants"},
	"components/schemas/ConversationMessage/properties/role":                                                   {of(answer.UserRole, answer.AssistantRole), "domain/answer role constants"},
	"components/schemas/ResearchJob/properties/mode":                                                           {of(answer.Quick, answer.Deep), "domain/answer Mode constants"},
	"components/schemas/ResearchRequest/properties/mode":                                                       {of(answer.Quick, answer.Deep), "domain/answer Mode constants"},
	"components/schemas/ResearchJob/properties/tier":                                                           {of(answer.Free, answer.Pro), "domain/answer Tier constants"},
	"components/schemas/ResearchRequest/properties/tier":                                                       {of(answer.Free, answer.Pro), "domain/answer Tier constants"},
	"components/schemas/ResearchJob/properties/status":                                                         {of(answer.JobQueued, answer.JobRunning, answer.JobSucceeded, answer.JobFailed, answer.JobCanceled), "domain/answer Job status constants"},
	"components/schemas/ResearchJobProgress/properties/status":                                                 {of(answer.JobQueued, answer.JobRunning, answer.JobSucceeded, answer.JobFailed, answer.JobCanceled), "domain/answer Job status constants"},
	"components/schemas/Answer/properties/synthesis":                                                           {of(answer.LLM, answer.Extractive, answer.NoSources), "domain/answer Synthesis constants"},
	"components/schemas/ResponseFormat/properties/type":                                                        {of(answer.FormatText, answer.FormatJSONSchema), "domain/answer FormatType constants"},
	"components/schemas/AuditEntryBase/properties/view":                                                        {of(audit.Public, audit.Owner, audit.Auditor), "domain/audit Audience constants"},
	"components/schemas/AuditEntryWithPayload/allOf/1/properties/view":                                         {of(audit.Owner, audit.Auditor), "domain/audit Audience constants that see the payload"},
	"components/schemas/AuditChainRules/properties/link":                                                       {[]string{fmt.Sprint(audit.LinkV1), fmt.Sprint(audit.LinkV2)}, "domain/audit LinkV1, LinkV2"},
	"components/schemas/WebhookReceipt/properties/outcome":                                                     {[]string{billing.OutcomePlanChanged, billing.OutcomeUnchanged, billing.OutcomeIgnored}, "commands/billing Outcome constants"},
	"components/schemas/AuditPayload/properties/outcome":                                                       {[]string{"ok", "cut", "canceled", complete.OutcomeRefused}, "commands/complete (record.go, stream.go, guardrail.go): a completion's outcome"},
	"components/schemas/AuditPayload/properties/guardrails/items/properties/where":                             {[]string{guardrail.Prompt, guardrail.Output}, "domain/guardrail Prompt, Output"},
	"components/schemas/GuardrailAction":                                                                       {of(guardrail.Actions()...), "domain/guardrail.Actions()"},
	"components/schemas/GuardrailRuleScope":                                                                    {of(guardrail.Ons()...), "domain/guardrail.Ons()"},
	"components/schemas/GuardrailFailMode":                                                                     {of(guardrail.FailModes()...), "domain/guardrail.FailModes()"},
	"components/schemas/GuardrailDetector":                                                                     {of(guardrail.Detectors()...), "domain/guardrail.Detectors()"},
	"components/schemas/EffectiveGuardrails/properties/scope":                                                  {of(guardrails.ScopeKey, guardrails.ScopeAccount, guardrails.ScopeNone), "projections/guardrails Scope constants"},
	"components/schemas/ModelList/properties/data/items/properties/kind":                                       {[]string{"router", "tier", "model", "embedding_tier", "embedding_model"}, "readapi/gateway/catalog_routes.go"},
	"components/schemas/EmbeddingRouting/properties/tier":                                                      {routing.EmbeddingTierNames(), "domain/routing.EmbeddingTierNames()"},
	"components/schemas/EmbeddingRequest/properties/encoding_format":                                           {[]string{"float", "base64"}, "readapi/gateway/embeddings.go parseEmbeddingRequest"},
	"components/schemas/Health/properties/status":                                                              {[]string{"ok", "degraded"}, "readapi/httpx/service.go HealthReport"},
	"components/schemas/Check/properties/status":                                                               {[]string{"ok", "down"}, "readapi/httpx/health.go"},
	"components/schemas/PaymentProviderCheck/properties/status":                                                {[]string{"ok", "down", "disabled"}, "commands/billing Health, adapters/payments Status"},
	"paths//account/get/parameters/notice/schema":                                                              {[]string{"revoked", "signed_out", "checkout_success", "checkout_cancelled"}, "readapi/accountweb/signin.go notices"},
	"paths//v1/chat/completions/post/parameters/X-Arr-Cache/schema":                                            {[]string{"on", "off"}, "readapi/gateway/completions.go cacheMode"},
	"paths//v1/responses/post/parameters/X-Arr-Cache/schema":                                                   {[]string{"on", "off"}, "readapi/gateway/completions.go cacheMode"},
	"components/schemas/DataSources/properties/layers/items/properties/status":                                 {[]string{"loaded", "not_loaded"}, "readapi/recordsapi data sources"},
	"components/schemas/ListRow/properties/contact_status":                                                     {[]string{"ok", "none", "erased", "unreadable"}, "readapi/records/lists.go contactOf"},
	"components/schemas/ListRow/properties/matched_by":                                                         {[]string{parcels.MatchedByAPN, parcels.MatchedByAddress}, "projections/parcels MatchSQL"},
	"components/schemas/ListRow/properties/reason": {[]string{lists.ReasonNoPropertyAddress, lists.ReasonNoHouseNumber, lists.ReasonAmbiguous,
		lists.ReasonAPNNotFound, lists.ReasonNoParcelAtAddress, lists.ReasonUnitConflict}, "projections/lists reasonSQL"},
	"paths//api/v1/lists/{list_id}/rows/get/parameters/signals/schema":                   {[]string{"0", "1"}, "readapi/records/lists.go query flag"},
	"paths//api/v1/lists/{list_id}/rows/get/parameters/include_contact/schema":           {[]string{"0", "1"}, "readapi/records/lists.go query flag"},
	"paths//api/v1/tiles/{z}/{x}/{y}.mvt/get/responses/200/headers/X-Tile-Cache/schema":  {[]string{"hit", "miss"}, "readapi/recordsapi/tiles.go tile"},
	"paths//api/v1/tiles/{z}/{x}/{y}.mvt/head/responses/200/headers/X-Tile-Cache/schema": {[]string{"hit", "miss"}, "readapi/recordsapi/tiles.go tile"},
	"paths//api/v1/exports/parcels/get/parameters/format/schema":                         {recordsapi.ExportFormats(), "readapi/recordsapi.ExportFormats()"},
	// OpenAI's wire format, as readapi/gateway (chat_request.go, responses/) parses and writes it.
	"components/schemas/ChatCompletionRequest/properties/messages/items/properties/role":         {[]string{"system", "developer", "user", "assistant", "tool", "function"}, "readapi/gateway/chat_request.go validRoles"},
	"components/schemas/ChatCompletionRequest/properties/response_format/properties/type":        {[]string{"text", "json_object", "json_schema"}, "readapi/gateway/chat_request.go"},
	"components/schemas/ResponseCreateRequest/properties/text/properties/format/properties/type": {[]string{"text", "json_object", "json_schema"}, "readapi/gateway/responses/tools.go"},
	"components/schemas/ResponseCreateRequest/properties/input/oneOf/1/items/properties/role":    {[]string{"user", "system", "developer", "assistant"}, "readapi/gateway/responses/input.go"},
	"components/schemas/ResponseCreateRequest/properties/input/oneOf/1/items/properties/type":    {[]string{"message", "function_call", "function_call_output", "reasoning"}, "readapi/gateway/responses/input.go"},
	"components/schemas/ResponseCreateRequest/properties/reasoning/properties/effort":            {[]string{"none", "minimal", "low", "medium", "high", "xhigh"}, "readapi/gateway/responses/request.go"},
	"components/schemas/ResponseCreateRequest/properties/text/properties/verbosity":              {[]string{"low", "medium", "high"}, "readapi/gateway/responses/tools.go"},
	"components/schemas/ResponseCreateRequest/properties/tools/items/properties/type":            {[]string{"function"}, "readapi/gateway/responses/tools.go"},
	"components/schemas/ResponseCreateRequest/properties/truncation":                             {[]string{"auto", "disabled"}, "readapi/gateway/responses/request.go"},
	"components/schemas/ResponseCreateRequest/properties/background":                             {[]string{"false"}, "readapi/gateway/responses/request.go: background runs are refused"},
	"components/schemas/ResponseCreateRequest/properties/top_logprobs":                           {[]string{"0"}, "readapi/gateway/responses/request.go: log probabilities are refused"},
	"components/schemas/Response/properties/object":                                              {[]string{"response"}, "readapi/gateway/responses/response.go"},
	"components/schemas/Response/properties/store":                                               {[]string{"false"}, "readapi/gateway/responses/response.go: nothing is stored"},
	"components/schemas/Response/properties/status":                                              {[]string{"completed", "incomplete", "failed", "in_progress"}, "readapi/gateway/responses/response.go"},
	"components/schemas/Response/properties/incomplete_details/properties/reason":                {[]string{"max_output_tokens", "content_filter"}, "readapi/gateway/responses/response.go"},
	// Anthropic's wire format, as readapi/gateway/messages parses and writes it.
	"paths//v1/messages/post/parameters/X-Arr-Cache/schema":                             {[]string{"on", "off"}, "readapi/gateway/completions.go cacheMode"},
	"components/schemas/MessageCreateRequest/properties/messages/items/properties/role": {[]string{"user", "assistant", "system"}, "readapi/gateway/messages/content.go"},
	"components/schemas/MessageCreateRequest/properties/tool_choice/properties/type":    {[]string{"auto", "any", "tool", "none"}, "readapi/gateway/messages/tools.go"},
	"components/schemas/Message/properties/stop_reason":                                 {messages.StopReasons(), "readapi/gateway/messages.StopReasons()"},
	"components/schemas/AnthropicError/properties/error/properties/type":                {messages.ErrorTypes(), "readapi/gateway/messages.ErrorTypes()"},
}

// TestOpenAPIEnumsFollowTheDomain: every enum in every document a service
// serves has a source in enumSources and lists exactly its values (null
// aside, which marks a nullable field).
func TestOpenAPIEnumsFollowTheDomain(t *testing.T) {
	docs := []struct {
		service string
		openapi func() ([]byte, error)
	}{{"answer", answerapi.OpenAPI}, {"gateway", gateway.OpenAPI}, {"records", recordsapi.OpenAPI}}
	used := map[string]bool{}
	for _, d := range docs {
		raw, err := d.openapi()
		if err != nil {
			t.Fatalf("%s: assembling the OpenAPI document: %v", d.service, err)
		}
		var doc any
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatalf("%s: openapi.json is not JSON: %v", d.service, err)
		}
		for where, enum := range enums("", doc) {
			used[where] = true
			src, ok := enumSources[where]
			if !ok {
				t.Errorf("%s: the enum at %s %v has no known source: add it to enumSources in readapi/enums_test.go with the domain constant it stands for", d.service, where, enum)
				continue
			}
			got, want := slices.Sorted(slices.Values(enum)), slices.Sorted(slices.Values(src.values))
			if !slices.Equal(got, want) {
				t.Errorf("%s: the enum at %s is %v; its source %s says %v", d.service, where, got, src.from, want)
			}
		}
	}
	var stale []string
	for where := range enumSources {
		if !used[where] {
			stale = append(stale, where)
		}
	}
	sort.Strings(stale)
	for _, s := range stale {
		t.Errorf("enumSources has %s, which no document has: take it off", s)
	}
}

// enums finds every enum under v, keyed by its place: object keys joined
// by "/", an array element by its "name" when it has one (parameters),
// else by its index. null is left out of the values.
func enums(at string, v any) map[string][]string {
	out := map[string][]string{}
	join := func(k string) string { return strings.TrimPrefix(at+"/"+k, "/") }
	switch x := v.(type) {
	case map[string]any:
		if e, ok := x["enum"].([]any); ok {
			var vals []string
			for _, v := range e {
				if v != nil {
					vals = append(vals, fmt.Sprint(v))
				}
			}
			out[at] = vals
		}
		for k, c := range x {
			if k == "enum" {
				continue
			}
			for w, e := range enums(join(k), c) {
				out[w] = e
			}
		}
	case []any:
		for i, c := range x {
			k := fmt.Sprint(i)
			if m, ok := c.(map[string]any); ok {
				if n, ok := m["name"].(string); ok {
					k = n
				}
			}
			for w, e := range enums(join(k), c) {
				out[w] = e
			}
		}
	}
	return out
}
