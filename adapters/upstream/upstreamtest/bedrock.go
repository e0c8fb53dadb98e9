package upstreamtest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/schemas"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/aws/smithy-go/transport/http/protocol/restjson1"
)

// The credentials the Bedrock stand-in knows (SetBedrockCredentials adds
// others): a request signed with another secret is refused with 403.
// BedrockAccessKey is a long-term key: a request that carries a session
// token with it is refused too.
const (
	BedrockAccessKey = "AKIDARRTESTBEDROCK01"
	BedrockSecretKey = "arr-test-bedrock-secret"
)

// BedrockRegion is the region the stand-in serves (SetBedrockRegion
// changes it): a request signed for another is refused with 403, as
// bedrock-runtime.<region>.amazonaws.com refuses one.
const BedrockRegion = "us-east-1"

// bedrockClockSkew is how far from the server's clock AWS takes a
// signature's X-Amz-Date: further is 403 InvalidSignatureException
// ("Signature expired" or "not yet current").
const bedrockClockSkew = 5 * time.Minute

// bedrockKey is a key's secret and the session token a request signed
// with it must carry (anyToken: whichever it carries, or none).
type bedrockKey struct {
	secret   string
	token    string
	anyToken bool
}

// BedrockBehavior is what the Converse stand-in does besides a model's
// Behavior (whose Latency, Status, Hang, CutAfter and ChunkDelay it
// honours too).
type BedrockBehavior struct {
	// Exception, for streams, is the :exception-type of an exception
	// event sent after ExceptionAfter text deltas (0: before
	// messageStart), ending the stream ("": none).
	Exception      string
	ExceptionAfter int
	// NoStop, for streams, ends the stream cleanly without messageStop.
	NoStop bool
}

// bedrockServer is the Converse stand-in's state.
type bedrockServer struct {
	mu        sync.Mutex
	secrets   map[string]bedrockKey
	region    string
	behaviors map[string]BedrockBehavior
	last      map[string]*bedrockruntime.ConverseInput
	// cache counts cache points as Anthropic's stand-in counts
	// cache_control breakpoints.
	cache *anthropicServer
}

func newBedrockServer() *bedrockServer {
	return &bedrockServer{secrets: map[string]bedrockKey{BedrockAccessKey: {secret: BedrockSecretKey}}, region: BedrockRegion,
		behaviors: map[string]BedrockBehavior{}, last: map[string]*bedrockruntime.ConverseInput{}, cache: newAnthropicServer()}
}

func (b *bedrockServer) reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.behaviors = map[string]BedrockBehavior{}
}

// SetBedrock sets the Converse behavior of model ("" for every model
// without its own).
func (s *Server) SetBedrock(model string, b BedrockBehavior) {
	s.bedrock.mu.Lock()
	defer s.bedrock.mu.Unlock()
	s.bedrock.behaviors[model] = b
}

// SetBedrockCredentials makes the stand-in accept requests signed with
// accessKey and secret too (replacing the key's former secret). With a
// session token given, a request must carry that one; without, the key
// is temporary credentials whose token the stand-in does not know and
// any (or none) is taken.
func (s *Server) SetBedrockCredentials(accessKey, secret string, sessionToken ...string) {
	s.bedrock.mu.Lock()
	defer s.bedrock.mu.Unlock()
	k := bedrockKey{secret: secret, anyToken: len(sessionToken) == 0}
	if len(sessionToken) > 0 {
		k.token = sessionToken[0]
	}
	s.bedrock.secrets[accessKey] = k
}

// SetBedrockRegion sets the region the stand-in serves (BedrockRegion
// by default).
func (s *Server) SetBedrockRegion(region string) {
	s.bedrock.mu.Lock()
	defer s.bedrock.mu.Unlock()
	s.bedrock.region = region
}

// LastConverse returns the last Converse request for model, as the
// SDK's types hold it (nil: none).
func (s *Server) LastConverse(model string) *bedrockruntime.ConverseInput {
	s.bedrock.mu.Lock()
	defer s.bedrock.mu.Unlock()
	return s.bedrock.last[model]
}

// bedrockErrorTypes are the exceptions of the statuses the stand-in
// answers.
var bedrockErrorTypes = map[int]string{
	400: "ValidationException", 403: "AccessDeniedException", 404: "ResourceNotFoundException",
	408: "ModelTimeoutException", 424: "ModelErrorException", 429: "ThrottlingException",
	500: "InternalServerException", 503: "ServiceUnavailableException",
}

func writeBedrockError(w http.ResponseWriter, status int, msg string) {
	typ, ok := bedrockErrorTypes[status]
	if !ok {
		typ = "InternalServerException"
	}
	writeBedrockException(w, status, typ, msg)
}

// writeBedrockException answers as Bedrock's REST-JSON protocol does:
// the exception's name in X-Amzn-ErrorType, {"message"} in the body.
func writeBedrockException(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-Errortype", typ+":http://internal.amazon.com/coral/com.amazon.bedrock/")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]string{"message": msg})
	_, _ = w.Write(b)
}

// converse answers POST /model/{model}/converse and .../converse-stream
// as Bedrock does: the SigV4 signature checked first (403), then the body
// read with the SDK's own types and refused (400 ValidationException)
// when they cannot hold it or it breaks the API's rules.
func (s *Server) converse(stream bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 32<<20))
		if err != nil {
			writeBedrockError(w, http.StatusBadRequest, err.Error())
			return
		}
		if typ, msg := s.bedrock.verify(r, body); typ != "" {
			writeBedrockException(w, http.StatusForbidden, typ, msg)
			return
		}
		model := r.PathValue("model")
		in, err := decodeConverse(model, body)
		if err != nil {
			writeBedrockError(w, http.StatusBadRequest, err.Error())
			return
		}
		var raw map[string]any
		_ = json.Unmarshal(body, &raw)
		s.mu.Lock()
		s.parents[model] = r.Header.Get("Traceparent")
		s.mu.Unlock()
		s.bedrock.mu.Lock()
		s.bedrock.last[model] = in
		bb, ok := s.bedrock.behaviors[model]
		if !ok {
			bb = s.bedrock.behaviors[""]
		}
		s.bedrock.mu.Unlock()
		b := s.behavior(model, raw, r.Header.Get("Authorization"))
		if b.injected(w, r, model, writeBedrockError) {
			return
		}
		a := bedrockAnswer(model, in)
		a.usage = s.bedrock.cacheStats(model, raw)
		if stream {
			s.converseStream(w, r, a, b, bb)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Amzn-Requestid", "req-"+model)
		_ = json.NewEncoder(w).Encode(a.reply())
	}
}

// verify checks the request's SigV4 signature by signing it again with
// the SDK's signer and the secret of its access key: the exception's name
// and message when it does not match ("": it does).
func (b *bedrockServer) verify(r *http.Request, body []byte) (string, string) {
	auth := r.Header.Get("Authorization")
	cred, signed, ok := parseAuthorization(auth)
	if !ok {
		return "MissingAuthenticationTokenException", "Missing Authentication Token"
	}
	scope := strings.Split(cred, "/") // key/date/region/service/aws4_request
	b.mu.Lock()
	key, known := b.secrets[scope[0]]
	region := b.region
	b.mu.Unlock()
	token := r.Header.Get("X-Amz-Security-Token")
	if len(scope) != 5 || !known || (!key.anyToken && token != key.token) {
		return "UnrecognizedClientException", "The security token included in the request is invalid."
	}
	at, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil || scope[3] != "bedrock" || scope[4] != "aws4_request" || scope[1] != at.Format("20060102") {
		return "IncompleteSignatureException", "X-Amz-Date or the credential scope is not what Bedrock signs"
	}
	if scope[2] != region {
		return "InvalidSignatureException", fmt.Sprintf("Credential should be scoped to a valid region, not '%s'.", scope[2])
	}
	if now := time.Now(); at.Before(now.Add(-bedrockClockSkew)) || at.After(now.Add(bedrockClockSkew)) {
		return "InvalidSignatureException", fmt.Sprintf("Signature expired or not yet current: %s is not within 5 minutes of %s.",
			at.Format("20060102T150405Z"), now.UTC().Format("20060102T150405Z"))
	}
	again, err := http.NewRequest(r.Method, "http://"+r.Host+r.RequestURI, bytes.NewReader(body))
	if err != nil {
		return "InvalidSignatureException", err.Error()
	}
	for _, h := range strings.Split(signed, ";") {
		if h != "host" && h != "x-amz-date" && h != "content-length" {
			again.Header[http.CanonicalHeaderKey(h)] = r.Header.Values(h)
		}
	}
	sum := sha256.Sum256(body)
	creds := aws.Credentials{AccessKeyID: scope[0], SecretAccessKey: key.secret, SessionToken: token}
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, again, hex.EncodeToString(sum[:]), scope[3], scope[2], at); err != nil {
		return "InvalidSignatureException", err.Error()
	}
	if again.Header.Get("Authorization") != auth {
		return "InvalidSignatureException", "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method."
	}
	return "", ""
}

// parseAuthorization reads "AWS4-HMAC-SHA256 Credential=…,
// SignedHeaders=…, Signature=…".
func parseAuthorization(h string) (cred, signed string, ok bool) {
	rest, ok := strings.CutPrefix(h, "AWS4-HMAC-SHA256 ")
	if !ok {
		return "", "", false
	}
	for _, f := range strings.Split(rest, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(f), "=")
		switch k {
		case "Credential":
			cred = v
		case "SignedHeaders":
			signed = v
		}
	}
	return cred, signed, cred != "" && signed != ""
}

// decodeConverse reads a Converse request body with the SDK's own
// deserializer into its types (the messages, system and tools through
// types.ConverseTokensRequest, which holds the same members, and the
// inference settings), then writes them again with the SDK's serializer:
// a body with a field those types do not hold (or shaped otherwise)
// does not come back the same and is refused, as the API refuses it.
func decodeConverse(model string, body []byte) (*bedrockruntime.ConverseInput, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return nil, fmt.Errorf("Malformed input request: %v", err)
	}
	part := func(keys ...string) []byte {
		m := map[string]json.RawMessage{}
		for _, k := range keys {
			if v, ok := top[k]; ok {
				m[k] = v
			}
		}
		b, _ := json.Marshal(m)
		return b
	}
	var tokens types.ConverseTokensRequest
	if err := sdkDecode(part("messages", "system", "toolConfig"), schemas.ConverseTokensRequest, &tokens); err != nil {
		return nil, err
	}
	in := &bedrockruntime.ConverseInput{ModelId: aws.String(model), Messages: tokens.Messages, System: tokens.System, ToolConfig: tokens.ToolConfig}
	if ic, ok := top["inferenceConfig"]; ok {
		in.InferenceConfig = &types.InferenceConfiguration{}
		if err := sdkDecode(ic, schemas.InferenceConfiguration, in.InferenceConfig); err != nil {
			return nil, err
		}
	}
	again, err := sdkEncode(in)
	if err != nil {
		return nil, err
	}
	var want, got map[string]any
	_ = json.Unmarshal(body, &want)
	_ = json.Unmarshal(again, &got)
	for k, v := range want {
		if !reflect.DeepEqual(v, got[k]) {
			return nil, fmt.Errorf("Malformed input request: %s: the Converse request's types do not hold it as sent", k)
		}
	}
	return in, validateConverse(in)
}

// sdkDecode reads JSON into out (a type of the SDK) with the SDK's
// REST-JSON protocol, as the SDK reads a reply.
func sdkDecode(data []byte, schema *smithy.Schema, out smithy.Deserializable) error {
	resp := &smithyhttp.Response{Response: &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: io.NopCloser(bytes.NewReader(data))}}
	op := smithy.NewOperationSchema(schemas.Converse, nil, schema)
	if err := restjson1.New(nil).DeserializeResponse(context.Background(), op, &smithy.TypeRegistry{}, resp, out); err != nil {
		return fmt.Errorf("Malformed input request: %v", err)
	}
	return nil
}

// sdkEncode writes in as the SDK's client writes a Converse request.
func sdkEncode(in *bedrockruntime.ConverseInput) ([]byte, error) {
	req := smithyhttp.NewStackRequest().(*smithyhttp.Request)
	op := smithy.NewOperationSchema(schemas.Converse, schemas.ConverseRequest, schemas.ConverseResponse)
	if err := restjson1.New(nil).SerializeRequest(context.Background(), op, in, req); err != nil {
		return nil, fmt.Errorf("Malformed input request: %v", err)
	}
	hr := req.Build(context.Background())
	if hr.Body == nil {
		return []byte("{}"), nil
	}
	return io.ReadAll(hr.Body)
}

// validateConverse checks the rules the API checks that the types do
// not: messages start with a user turn and alternate, text is not blank,
// a toolUse needs a toolConfig and a toolResult the toolUse it answers
// in the turn before; toolUseIds and tool names match their pattern, an
// input schema is an object, the inference settings are in their
// documented ranges.
func validateConverse(in *bedrockruntime.ConverseInput) error {
	if len(in.Messages) == 0 {
		return errors.New("The model returned the following errors: messages: at least one message is required")
	}
	if err := validateIDs(in); err != nil {
		return err
	}
	uses := map[string]bool{}
	for i, m := range in.Messages {
		want := types.ConversationRoleUser
		if i%2 == 1 {
			want = types.ConversationRoleAssistant
		}
		if m.Role != want {
			return fmt.Errorf("A conversation must alternate between user and assistant roles; messages.%d is %q", i, m.Role)
		}
		answered := uses
		uses = map[string]bool{}
		for _, c := range m.Content {
			switch v := c.(type) {
			case *types.ContentBlockMemberText:
				if strings.TrimSpace(v.Value) == "" {
					return fmt.Errorf("messages.%d: The text field in the ContentBlock object is blank", i)
				}
			case *types.ContentBlockMemberToolUse:
				if in.ToolConfig == nil {
					return errors.New("The toolConfig field must be defined when using toolUse and toolResult content blocks.")
				}
				uses[aws.ToString(v.Value.ToolUseId)] = true
			case *types.ContentBlockMemberToolResult:
				if in.ToolConfig == nil {
					return errors.New("The toolConfig field must be defined when using toolUse and toolResult content blocks.")
				}
				if !answered[aws.ToString(v.Value.ToolUseId)] {
					return fmt.Errorf("messages.%d: the toolResult blocks exceed the toolUse blocks of the previous turn", i)
				}
			}
		}
	}
	if err := validateTools(in.ToolConfig); err != nil {
		return err
	}
	return validateInference(in.InferenceConfig)
}

// bedrockID is Converse's pattern of a toolUseId and a tool's name.
var bedrockID = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// validateIDs checks the toolUseId of each toolUse and toolResult block
// of in's messages.
func validateIDs(in *bedrockruntime.ConverseInput) error {
	for i, m := range in.Messages {
		for j, c := range m.Content {
			id := ""
			switch v := c.(type) {
			case *types.ContentBlockMemberToolUse:
				id = aws.ToString(v.Value.ToolUseId)
			case *types.ContentBlockMemberToolResult:
				id = aws.ToString(v.Value.ToolUseId)
			default:
				continue
			}
			if !bedrockID.MatchString(id) {
				return fmt.Errorf("1 validation error detected: Value '%s' at 'messages.%d.member.content.%d.member.toolUseId' failed to satisfy constraint: "+
					"Member must satisfy regular expression pattern: [a-zA-Z0-9_-]+ (length 1 to 64)", id, i+1, j+1)
			}
		}
	}
	return nil
}

// validateTools checks each tool's name and that its input schema is a
// JSON object.
func validateTools(tc *types.ToolConfiguration) error {
	if tc == nil {
		return nil
	}
	for i, t := range tc.Tools {
		spec, ok := t.(*types.ToolMemberToolSpec)
		if !ok {
			continue
		}
		if name := aws.ToString(spec.Value.Name); !bedrockID.MatchString(name) {
			return fmt.Errorf("toolConfig.tools.%d.toolSpec.name: %q does not satisfy [a-zA-Z0-9_-]+ (length 1 to 64)", i+1, name)
		}
		var schema any
		js, ok := spec.Value.InputSchema.(*types.ToolInputSchemaMemberJson)
		if ok && js.Value != nil {
			_ = js.Value.UnmarshalSmithyDocument(&schema)
		}
		if _, isObject := schema.(map[string]any); !isObject {
			return fmt.Errorf("toolConfig.tools.%d.toolSpec.inputSchema: the json schema must be a JSON object", i+1)
		}
	}
	return nil
}

// validateInference checks the documented ranges of the inference
// settings: maxTokens at least 1, temperature and topP within 0 to 1, at
// most 2500 stop sequences of at least one character each.
func validateInference(ic *types.InferenceConfiguration) error {
	switch {
	case ic == nil:
		return nil
	case ic.MaxTokens != nil && *ic.MaxTokens < 1:
		return errors.New("inferenceConfig.maxTokens: must be at least 1")
	case ic.Temperature != nil && (*ic.Temperature < 0 || *ic.Temperature > 1):
		return fmt.Errorf("inferenceConfig.temperature: %v is not within 0 to 1", *ic.Temperature)
	case ic.TopP != nil && (*ic.TopP < 0 || *ic.TopP > 1):
		return fmt.Errorf("inferenceConfig.topP: %v is not within 0 to 1", *ic.TopP)
	case len(ic.StopSequences) > 2500:
		return errors.New("inferenceConfig.stopSequences: at most 2500")
	}
	for i, s := range ic.StopSequences {
		if s == "" {
			return fmt.Errorf("inferenceConfig.stopSequences.%d: Member must have length greater than or equal to 1", i+1)
		}
	}
	return nil
}
