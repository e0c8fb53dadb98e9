package upstream

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/credentials/processcreds"
	"github.com/aws/aws-sdk-go-v2/credentials/ssocreds"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/logging"

	"github.com/arr-dev/arr/adapters/upstream/translate/bedrock"
	"github.com/arr-dev/arr/domain/anthropic"
	"github.com/arr-dev/arr/domain/routing"
)

// The content types of Converse's replies.
const (
	bedrockJSON        = "application/json"
	bedrockEventStream = "application/vnd.amazon.eventstream"
)

// bedrockCall is what a Bedrock endpoint carries besides its path: the
// translated body and what reading the reply needs.
type bedrockCall struct {
	body []byte
	plan bedrock.Plan
	// model is the chat request's model, the reply's.
	model string
	// url and creds are set by send once the region and the credentials
	// are known.
	url    string
	region string
	creds  aws.Credentials
	// chain is the credential chain creds came from (forgotten when
	// Bedrock refuses them).
	chain *awsChain
}

// bedrockEndpoint reads r's chat request and translates it; a request
// Converse cannot carry is refused as the client's (400) without a call.
func bedrockEndpoint(m routing.Model, r Request) (endpoint, error) {
	refuse := func(msg string) (endpoint, error) {
		return endpoint{}, &Error{Model: m.ID, Status: http.StatusBadRequest, Body: bedrock.ClientError("invalid_request", msg),
			Type: "invalid_request", Err: errors.New(msg)}
	}
	req, err := bedrock.ReadChat(r.Body)
	if err != nil {
		return refuse(err.Error())
	}
	if req.Stream != r.Stream {
		return refuse(fmt.Sprintf("the body's stream field is not %v", r.Stream))
	}
	// prompt_cache_key asks for caching: Bedrock caches up to cache points.
	conv, plan, err := bedrock.FromChat(&req, bedrock.Options{CachePoints: req.PromptCacheKey != nil})
	if err != nil {
		return refuse(err.Error())
	}
	body, err := json.Marshal(conv)
	if err != nil {
		return refuse(err.Error())
	}
	path := "/model/" + escapeLabel(m.UpstreamModel) + "/converse"
	if r.Stream {
		path += "-stream"
	}
	return endpoint{path: path, maxReply: maxChatReply, api: APIBedrock, bedrock: &bedrockCall{body: body, plan: plan, model: req.Model}}, nil
}

// escapeLabel escapes a model id (or an inference profile's ARN) as the
// AWS SDK escapes a URI label: everything but unreserved characters.
func escapeLabel(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

// regionName is what an AWS region's name looks like (it goes into a
// host name).
var regionName = regexp.MustCompile(`^[a-z]{2}(-[a-z0-9]+)+-[0-9]+$`)

// awsChain is the AWS credential chain as loaded: its credentials (a
// cache) and the region it names.
type awsChain struct {
	creds  aws.CredentialsProvider
	region string
}

// aws is the credential chain: Config.AWSCredentials, else the standard
// chain (environment, shared files with their credential_process, SSO,
// web identity, containers; the EC2 instance metadata service only with
// Config.AWSUseIMDS), loaded on first use, again after a failure to load
// and after Bedrock refused its credentials (forgetAWS). An error's text
// is arr's own (awsFailure), never the SDK's.
func (c *Client) aws(ctx context.Context) (*awsChain, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.awsChain != nil {
		return c.awsChain, nil
	}
	if c.cfg.AWSCredentials != nil {
		c.awsChain = &awsChain{creds: aws.NewCredentialsCache(c.cfg.AWSCredentials)}
		return c.awsChain, nil
	}
	imdsState := imds.ClientDisabled
	if c.cfg.AWSUseIMDS {
		imdsState = imds.ClientEnabled
	}
	// The SDK's own warnings (a credential source falling back) go to
	// the client's logger, not to standard error.
	log := c.cfg.Logger
	sdkLog := logging.LoggerFunc(func(_ logging.Classification, format string, v ...any) {
		log.Warn("aws sdk: " + fmt.Sprintf(format, v...))
	})
	cfg, err := config.LoadDefaultConfig(ctx, config.WithEC2IMDSClientEnableState(imdsState), config.WithLogger(sdkLog))
	if err != nil {
		return nil, awsFailure("the AWS configuration could not be loaded", err)
	}
	c.awsChain = &awsChain{creds: cfg.Credentials, region: cfg.Region}
	return c.awsChain, nil
}

// forgetAWS drops chain (when it is still the client's), so the next
// Bedrock call loads the chain and retrieves its credentials again: the
// keys a refresher rotated in a shared credentials file, or a provider's
// new ones, after Bedrock refused the old (as a Vertex AI token is
// forgotten on a 401).
func (c *Client) forgetAWS(chain *awsChain) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.awsChain == chain {
		c.awsChain = nil
	}
}

// badCredentials are the 403 exceptions that say the credentials signed
// with are not (or no longer) good: unknown key, wrong secret, expired
// token.
var badCredentials = map[string]bool{
	"InvalidSignatureException": true, "UnrecognizedClientException": true, "ExpiredTokenException": true,
}

// awsFailure is the error of a failed credential chain: what failed and
// the failure's kind, by construction never the SDK's error text (which
// may quote a credential_process's whole output, secret key and session
// token included).
func awsFailure(what string, err error) error {
	return fmt.Errorf("%s: %s", what, awsFailureKind(err))
}

// awsFailureKind classifies a credential chain's error by its type.
func awsFailureKind(err error) string {
	var (
		proc    *processcreds.ProviderError
		sso     *ssocreds.InvalidTokenError
		empty   *credentials.StaticCredentialsEmptyError
		api     smithy.APIError
		netErr  net.Error
		profile config.SharedConfigProfileNotExistError
		file    config.SharedConfigLoadError
	)
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "timed out"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.As(err, &proc):
		return "credential_process failed or printed what is not its credentials' JSON"
	case errors.As(err, &sso):
		return "the SSO token is missing or expired"
	case errors.As(err, &empty):
		return "static credentials are empty"
	case errors.As(err, &profile):
		return "the profile is not in the shared config"
	case errors.As(err, &file):
		return "a shared config or credentials file could not be read"
	case errors.As(err, &api):
		return "a credential service refused (" + awsCode(api.ErrorCode()) + ")"
	case errors.As(err, &netErr):
		return "a credential endpoint could not be reached"
	}
	return "no usable credentials"
}

// awsCode is an AWS error code as it may be shown: letters, digits and
// dots only, at most 64 ("other" otherwise).
func awsCode(code string) string {
	if !awsCodeName.MatchString(code) {
		return "other"
	}
	return code
}

var awsCodeName = regexp.MustCompile(`^[A-Za-z0-9.]{1,64}$`)

// prepareBedrock resolves a Bedrock call's region, URL and credentials
// before the breaker is asked: a model that cannot be signed for is not
// configured (retryable, no call, not the breaker's). Loading the chain
// and retrieving its credentials are bounded by Config.Timeout and the
// caller's ctx: a credential source that never answers fails each call
// at its own deadline (the SDK's cache goes on retrieving in the
// background, and later calls wait for that, each as long as its own
// bound).
func (c *Client) prepareBedrock(ctx context.Context, m routing.Model, b *bedrockCall) error {
	notConfigured := func(err error) error {
		return &Error{Model: m.ID, Retryable: true, Err: fmt.Errorf("%w: %w", ErrNotConfigured, err)}
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	chain, err := c.aws(ctx)
	if err != nil {
		return notConfigured(err)
	}
	b.region = m.Region
	if b.region == "" {
		b.region = chain.region
	}
	if !regionName.MatchString(b.region) {
		return notConfigured(fmt.Errorf("no AWS region (the catalog's region or AWS_REGION), or not a region name: %q", b.region))
	}
	if chain.creds == nil {
		return notConfigured(errors.New("no AWS credentials"))
	}
	b.chain = chain
	b.creds, err = chain.creds.Retrieve(ctx)
	if err != nil {
		return notConfigured(awsFailure("the AWS credential chain failed", err))
	}
	base := strings.TrimSuffix(m.BaseURL, "/")
	if base == "" {
		base = "https://bedrock-runtime." + b.region + ".amazonaws.com"
	}
	b.url = base
	return nil
}

// sign signs req (its body b.body) with SigV4 for the bedrock service.
func (b *bedrockCall) sign(ctx context.Context, req *http.Request) error {
	sum := sha256.Sum256(b.body)
	if err := v4.NewSigner().SignHTTP(ctx, b.creds, req, hex.EncodeToString(sum[:]), "bedrock", b.region, time.Now()); err != nil {
		return fmt.Errorf("signing the request: %w", err)
	}
	return nil
}

// bedrockMeta is the chat id, time and model of a reply.
func (b *bedrockCall) meta(h http.Header) bedrock.Meta {
	id := h.Get("X-Amzn-Requestid")
	if id == "" {
		id = fmt.Sprintf("%x", time.Now().UnixNano())
	}
	return bedrock.Meta{ID: "chatcmpl-" + id, Model: b.model, Created: time.Now().Unix()}
}

// bedrockReplyType is the Content-Type of a Converse reply.
func bedrockReplyType(stream bool) string {
	if stream {
		return bedrockEventStream
	}
	return bedrockJSON
}

// hasType: the reply's Content-Type is mt.
func hasType(h http.Header, mt string) bool {
	got, _, err := mime.ParseMediaType(h.Get("Content-Type"))
	return err == nil && got == mt
}

// bedrockRefusal is the Error of a Bedrock error reply (Classify): a
// ValidationException and the like are the request's own, kept for the
// client in OpenAI's error shape and never the breaker's; throttling,
// 5xx, a failing model and the operator's credentials or model id are
// retryable. A 403 that refuses the credentials forgets the chain they
// came from.
func (c *Client) bedrockRefusal(m routing.Model, call *bedrockCall, status int, h http.Header, b []byte) *Error {
	f := bedrock.Classify(status, h.Get("X-Amzn-Errortype"), b)
	if status == http.StatusForbidden && badCredentials[f.Type] && call.chain != nil {
		c.forgetAWS(call.chain)
	}
	e := &Error{Model: m.ID, Status: status, Retryable: f.Retryable, Type: f.Type, Err: fmt.Errorf("%s (%s)", http.StatusText(status), f.Type)}
	if !f.Retryable {
		e.Body = f.Body
	}
	return e
}

// bedrockReply translates a non-streamed Converse reply (out.Data) into a
// chat completion; one that cannot be read is the upstream's failure.
func bedrockReply(m routing.Model, out *Response, b *bedrockCall) (*Response, error) {
	res, err := bedrock.ToChat(out.Data, b.plan, b.meta(out.Header))
	if err != nil {
		return nil, &Error{Model: m.ID, Status: out.Status, Retryable: true, Err: err}
	}
	out.Data = res.Body
	if res.Usage != nil {
		out.Usage = anthropicUsage(*res.Usage)
	}
	return out, nil
}

// anthropicUsage is Bedrock's usage in Anthropic's terms, which are the
// same: uncached input, output, cache reads, cache writes.
func anthropicUsage(u bedrock.Usage) *anthropic.Usage {
	return &anthropic.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
		CacheReadInputTokens: u.CacheReadInputTokens, CacheCreationInputTokens: u.CacheWriteInputTokens}
}

// The bounds of one event-stream frame, as the format documents them
// (the SDK's decoder checks neither): its payload and its headers.
const (
	maxFramePayload = 16 << 20
	maxFrameHeaders = 128 << 10
)

// bedrockStart makes out's stream read event-stream frames as chat
// chunks (through the stream's reader, bounded in all at the longest
// reply as Anthropic's and Gemini's are; one frame's payload at most
// maxFramePayload, checked on its prelude before it is read) and reads
// the first ahead, so a stream that fails at once (an
// exception frame first) is a failed call of the breaker and another
// upstream is tried; a validationException is the request's own.
func bedrockStart(m routing.Model, out *Response, b *bedrockCall) (*Response, error) {
	s := out.Stream
	s.frames = &bedrockFrames{r: s.r, dec: eventstream.NewDecoder(),
		st: bedrock.NewStreamer(b.plan, b.meta(out.Header)), touch: s.touch}
	err := s.Peek()
	if err == nil {
		return out, nil
	}
	s.Close()
	ue := &Error{Model: m.ID, Status: out.Status, Retryable: true, Err: err}
	var ee *EventError
	if errors.As(err, &ee) {
		ue.Type = ee.Type
		if f := bedrock.StreamException(ee.exception, ee.Body); !f.Retryable {
			ue.Status, ue.Retryable, ue.Body = f.Status, false, f.Body
		}
	}
	return nil, ue
}

// bedrockFrames reads a ConverseStream's frames into chat chunks.
type bedrockFrames struct {
	r     *bufio.Reader
	dec   *eventstream.Decoder
	buf   []byte
	st    *bedrock.Streamer
	queue [][]byte
	touch func()
	err   error
	done  bool
}

// usage is the stream's Bedrock usage so far, in Anthropic's terms.
func (f *bedrockFrames) usage() anthropic.Usage {
	if u := f.st.Usage(); u != nil {
		return *anthropicUsage(*u)
	}
	return anthropic.Usage{}
}

// next returns the next chat chunk: io.EOF once the stream ended after
// its messageStop and metadata (the usage), ErrCut (wrapped) when it ends
// before, breaks, sends an exception (an *EventError too), a frame over
// its bound (ErrTooLarge too) or one that cannot be read.
func (f *bedrockFrames) next() (Event, error) {
	for len(f.queue) == 0 {
		if f.err != nil {
			return Event{}, f.err
		}
		if f.done {
			return Event{}, io.EOF
		}
		f.err = f.read()
	}
	c := f.queue[0]
	f.queue = f.queue[1:]
	return Event{Data: c}, nil
}

// read reads one frame: its chunks are queued, or the error that ends
// the stream returned (nil too when it ended cleanly, done set).
func (f *bedrockFrames) read() error {
	if err := f.checkPrelude(); err != nil {
		return err
	}
	msg, err := f.dec.Decode(f.r, f.buf[:0])
	switch {
	case errors.Is(err, io.EOF) && f.st.Ended():
		f.done = true
		return nil
	case errors.Is(err, io.EOF) && f.st.Stopped():
		return fmt.Errorf("%w (no metadata event after messageStop: the usage is unknown)", ErrCut)
	case errors.Is(err, io.EOF):
		return fmt.Errorf("%w (no messageStop)", ErrCut)
	case errors.Is(err, ErrTooLarge):
		return fmt.Errorf("%w: %w", ErrCut, ErrTooLarge)
	case err != nil:
		return fmt.Errorf("%w: %v", ErrCut, err)
	}
	f.buf = msg.Payload[:0]
	f.touch()
	header := func(name string) string {
		if v := msg.Headers.Get(name); v != nil {
			return v.String()
		}
		return ""
	}
	switch header(":message-type") {
	case "event":
		chunks, err := f.st.Event(header(":event-type"), msg.Payload)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrCut, err)
		}
		f.queue = chunks
		return nil
	case "exception":
		typ := header(":exception-type")
		fl := bedrock.StreamException(typ, msg.Payload)
		return fmt.Errorf("%w: %w", ErrCut, &EventError{Body: bytes.Clone(msg.Payload), Type: fl.Type, exception: typ})
	}
	e := &EventError{Body: []byte(header(":error-message")), Type: header(":error-code")}
	return fmt.Errorf("%w: %w", ErrCut, e)
}

// checkPrelude refuses the next frame when its prelude (total length,
// headers length) says its payload or headers are over their bound;
// a prelude not all there is left to the decoder.
func (f *bedrockFrames) checkPrelude() error {
	p, err := f.r.Peek(8)
	if err != nil {
		return nil
	}
	total, headers := int64(binary.BigEndian.Uint32(p[0:4])), int64(binary.BigEndian.Uint32(p[4:8]))
	// A frame is a 12-byte prelude, the headers, the payload and a 4-byte
	// checksum.
	if headers > maxFrameHeaders || total-headers-16 > maxFramePayload {
		return fmt.Errorf("%w: %w: an event-stream frame of %d bytes (at most %d MiB of payload)", ErrCut, ErrTooLarge, total, maxFramePayload>>20)
	}
	return nil
}
