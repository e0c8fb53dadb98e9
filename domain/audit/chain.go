package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain"
)

// StreamID is the one stream of the chain: its stream version is the
// entry's sequence number, so an append with the exact expected version
// can only extend the chain at its head.
const StreamID = "auditchain"

// Genesis is the previous hash of the first entry: 32 zero bytes.
var Genesis = hex.EncodeToString(make([]byte, sha256.Size))

// Completion is the payload of one audit entry: what was asked and
// answered, by whom, at what cost — hashes of the request and response
// bodies, never their text. The hashes are keyed (HashKey) in entries
// linked by LinkV2, plain SHA-256 in older ones.
type Completion struct {
	// AccountID is the account that asked.
	AccountID uuid.UUID `json:"account_id"`
	// KeyID is the key that asked.
	KeyID uuid.UUID `json:"key_id"`
	// RequestID is the gateway's id of the request (its x-request-id).
	RequestID string `json:"request_id"`
	// RequestHash is the hex hash of the request body (keyed in LinkV2
	// entries).
	RequestHash string `json:"request_hash"`
	// ResponseHash is the hex hash of the response body (keyed in LinkV2
	// entries).
	ResponseHash string `json:"response_hash"`
	// Tier is the routing tier that answered (nano, small, mid, high).
	Tier string `json:"tier"`
	// Model is the upstream model that answered.
	Model string `json:"model"`
	// Vendor is the upstream's vendor.
	Vendor string `json:"vendor"`
	// Difficulty is the request's difficulty score in [0, 1], which chose
	// the tier.
	Difficulty float64 `json:"difficulty"`
	// Stream is true for a streamed (server-sent events) completion.
	Stream bool `json:"stream"`
	// PromptTokens is the completion's input tokens.
	PromptTokens int64 `json:"prompt_tokens"`
	// CompletionTokens is the completion's output tokens.
	CompletionTokens int64 `json:"completion_tokens"`
	// UsageEstimated is true when the upstream did not report usage and
	// the gateway counted the tokens itself.
	UsageEstimated bool `json:"usage_estimated"`
	// CostMicroUSD is the completion's cost in micro-dollars (millionths
	// of a US dollar).
	CostMicroUSD int64 `json:"cost_micro_usd"`
	// CacheHit is true when the gateway answered from its response cache
	// without calling an upstream (and cost nothing).
	CacheHit bool `json:"cache_hit"`
	// Outcome is "ok", or "cut" for a stream the upstream broke off.
	Outcome string `json:"outcome"`
	// Attempts is how many upstream calls it took, retries and failovers
	// included (0 for a cache hit).
	Attempts int `json:"attempts"`
	// UpstreamMS is the time until the answering upstream's first byte, in
	// milliseconds (0 for a cache hit).
	UpstreamMS float64 `json:"upstream_ms"`
	// TotalMS is the request's whole time in the gateway, in milliseconds.
	TotalMS float64 `json:"total_ms"`
	// StartedAt is when the gateway received the request (UTC).
	StartedAt time.Time `json:"started_at"`
	// Operation is what was asked: empty for a chat completion (every
	// entry before embeddings existed), OperationEmbeddings for an
	// embeddings request, whose PromptTokens are its input tokens and whose
	// CompletionTokens are 0. Left out of the JSON when empty, so a chat
	// entry's payload is what it always was.
	Operation string `json:"operation,omitempty"`
	// CacheReadTokens is how many of PromptTokens the upstream read from
	// its prompt cache (OpenAI's cached_tokens), billed at the model's
	// cached-input price. Left out of the JSON when 0, so the payload of an
	// entry without prompt caching is what it always was.
	CacheReadTokens int64 `json:"cache_read_tokens,omitempty"`
	// CacheWriteTokens is how many of PromptTokens the upstream wrote to
	// its prompt cache (Anthropic's cache_creation_input_tokens), billed at
	// the model's cache-write price. Left out of the JSON when 0.
	CacheWriteTokens int64 `json:"cache_write_tokens,omitempty"`
	// Guardrails are the guardrail rules that fired on the request or its
	// reply and what each did (redact, refuse, log): the rule's name,
	// never the text it matched. A request a guardrail refused has outcome
	// "refused" and, refused before any upstream, no model and no cost.
	// Left out of the JSON when none fired.
	Guardrails []GuardrailFired `json:"guardrails,omitempty"`
}

// GuardrailFired is one guardrail rule that fired: pii_<detector>,
// deny_pattern, prompt_too_large or webhook; its action; and where
// (prompt or output).
type GuardrailFired struct {
	// Rule is the rule's name: pii_email, pii_credit_card, ...,
	// deny_pattern, prompt_too_large or webhook.
	Rule string `json:"rule"`
	// Action is what it did: redact, refuse or log.
	Action string `json:"action"`
	// Where is what it scanned: prompt or output.
	Where string `json:"where"`
}

// OperationEmbeddings is the Operation of an embeddings request
// (POST /v1/embeddings); OpenTelemetry's gen_ai.operation.name says the
// same.
const OperationEmbeddings = "embeddings"

// Day is the UTC day of the completion, for rollups.
func (c Completion) Day() string { return c.StartedAt.UTC().Format("2006-01-02") }

// The link algorithms: how an entry's hash binds its payload to the entry
// before it. bytes(h) is the 32 bytes that the 64 hex digits h encode.
const (
	// LinkV1 is hash = hex(SHA-256(bytes(prev_hash) ‖ payload)). Entries
	// of schema version 1 (no "link" field) use it. Checking it needs the
	// payload itself.
	LinkV1 = 1
	// LinkV2 is hash = hex(SHA-256(bytes(prev_hash) ‖ bytes(payload_sha256)))
	// with payload_sha256 = hex(SHA-256(payload)). Anyone holding the
	// public view of an entry (hash, prev_hash, payload_sha256) can check
	// it without the payload; the payload's owner checks payload_sha256.
	LinkV2 = 2
)

// Rules of the chain in words, for the audit endpoint, its OpenAPI
// document and `arr audit verify`.
const (
	LinkV1Rule        = "hash = hex(SHA-256(bytes(prev_hash) || payload)), payload being the payload's JSON text exactly as stored; checking it needs the payload"
	LinkV2Rule        = "hash = hex(SHA-256(bytes(prev_hash) || bytes(payload_sha256))); checking it needs only hash, prev_hash and payload_sha256"
	PayloadSHA256Rule = "payload_sha256 = hex(SHA-256(payload)), payload being the payload's JSON text exactly as stored; bytes(h) is the 32 bytes the 64 hex digits h encode"
)

// CompletionRecorded is one entry of the chain. Payload holds the
// Completion as canonical JSON; Hash links it to PrevHash by the entry's
// link algorithm (LinkAlgorithm).
//
// Schema version 2 added Link; version 1 entries have none and use LinkV1.
type CompletionRecorded struct {
	// Seq is the entry's place in the chain, from 0 (its version in the
	// auditchain stream).
	Seq uint64 `json:"seq"`
	// PrevHash is the hash of the entry before (Genesis, 64 zeros, for
	// the first).
	PrevHash string `json:"prev_hash"`
	// Hash is the entry's hash (64 hex digits): the audit_hash the
	// gateway returns with the completion.
	Hash string `json:"hash"`
	// Payload is the Completion, as canonical JSON.
	Payload json.RawMessage `json:"payload"`
	// Link is the link algorithm, LinkV2 for every new entry; absent in
	// schema version 1 entries (LinkV1). It is not hashed itself: an entry
	// whose Link was changed no longer matches its hash.
	Link int `json:"link,omitempty"`
}

func (CompletionRecorded) EventType() string  { return "CompletionRecorded" }
func (CompletionRecorded) SchemaVersion() int { return 2 }

// Upcast implements domain.Upcaster: a version 1 entry is a version 2 entry
// whose link algorithm is LinkV1 (version 1 had no "link" field).
func (CompletionRecorded) Upcast(from int, data []byte) ([]byte, error) {
	if from != 1 {
		return nil, fmt.Errorf("no schema version %d of CompletionRecorded", from)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if _, ok := doc["link"]; !ok {
		doc["link"] = json.RawMessage(strconv.Itoa(LinkV1))
	}
	return json.Marshal(doc)
}

// LinkAlgorithm is the entry's link algorithm: Link, or LinkV1 when it is
// absent.
//
// A version 1 entry, which has no link field, reads as LinkV1: through the
// registry, Upcast sets it; a payload decoded without the registry has
// Link 0, which this also reads as LinkV1.
func (e *CompletionRecorded) LinkAlgorithm() int {
	if e.Link == 0 {
		return LinkV1
	}
	return e.Link
}

// Canonical encodes a payload canonically: compact JSON with the fields in
// declaration order and times in RFC 3339 UTC.
func Canonical(c Completion) ([]byte, error) {
	c.StartedAt = c.StartedAt.UTC()
	b, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("encoding audit payload: %w", err)
	}
	return b, nil
}

// PayloadSHA256 returns hex(SHA-256(payload)): the payload_sha256 of an
// entry, shown to everyone in its place.
func PayloadSHA256(payload []byte) string {
	s := sha256.Sum256(payload)
	return hex.EncodeToString(s[:])
}

// decodeHash reads a 64-hex-digit hash into its 32 bytes.
func decodeHash(what, h string) ([]byte, error) {
	b, err := hex.DecodeString(h)
	if err != nil || len(b) != sha256.Size {
		return nil, fmt.Errorf("%s %q is not 64 hex digits", what, h)
	}
	return b, nil
}

// HashV1 returns hex(SHA-256(prev ‖ payload)) for a hex prev hash: the
// LinkV1 rule.
func HashV1(prevHex string, payload []byte) (string, error) {
	prev, err := decodeHash("previous hash", prevHex)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	h.Write(prev)
	h.Write(payload)
	return hex.EncodeToString(h.Sum(nil)), nil
}

// HashV2 returns hex(SHA-256(prev ‖ payloadSHA256)) for hex prev and
// payload digests: the LinkV2 rule, which needs no payload.
func HashV2(prevHex, payloadSHA256Hex string) (string, error) {
	prev, err := decodeHash("previous hash", prevHex)
	if err != nil {
		return "", err
	}
	digest, err := decodeHash("payload_sha256", payloadSHA256Hex)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	h.Write(prev)
	h.Write(digest)
	return hex.EncodeToString(h.Sum(nil)), nil
}

// ComputeHash returns the hash the entry's link algorithm gives for its
// PrevHash and Payload.
func (e *CompletionRecorded) ComputeHash() (string, error) {
	switch a := e.LinkAlgorithm(); a {
	case LinkV1:
		return HashV1(e.PrevHash, e.Payload)
	case LinkV2:
		return HashV2(e.PrevHash, PayloadSHA256(e.Payload))
	default:
		return "", fmt.Errorf("unknown link algorithm %d", a)
	}
}

// Link builds the entry with sequence number seq after prevHex, linked by
// LinkV2.
func Link(seq uint64, prevHex string, payload []byte) (*CompletionRecorded, error) {
	e := &CompletionRecorded{Seq: seq, PrevHash: prevHex, Payload: payload, Link: LinkV2}
	h, err := e.ComputeHash()
	if err != nil {
		return nil, err
	}
	e.Hash = h
	return e, nil
}

// Verify checks one entry against the hash of the entry before it (Genesis
// for seq 0): the link, the hash of its payload by the entry's own link
// algorithm (LinkV1 or LinkV2), and that the payload is canonical JSON. It
// returns nil or a description of what is broken.
func Verify(e *CompletionRecorded, expectedPrev string, expectedSeq uint64) error {
	if e.Seq != expectedSeq {
		return fmt.Errorf("sequence number %d where %d was expected", e.Seq, expectedSeq)
	}
	if e.PrevHash != expectedPrev {
		return fmt.Errorf("prev_hash %s does not match the previous entry's hash %s", e.PrevHash, expectedPrev)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, e.Payload); err != nil || !bytes.Equal(compact.Bytes(), e.Payload) {
		return fmt.Errorf("payload is not canonical JSON")
	}
	h, err := e.ComputeHash()
	if err != nil {
		return err
	}
	if h != e.Hash {
		rule := "SHA-256(prev_hash ‖ payload)"
		if e.LinkAlgorithm() == LinkV2 {
			rule = "SHA-256(prev_hash ‖ SHA-256(payload))"
		}
		return fmt.Errorf("hash %s does not match %s = %s (link %d)", e.Hash, rule, h, e.LinkAlgorithm())
	}
	return nil
}

// DecodePayload reads the Completion of an entry.
func (e *CompletionRecorded) DecodePayload() (Completion, error) {
	var c Completion
	if err := json.Unmarshal(e.Payload, &c); err != nil {
		return c, fmt.Errorf("audit entry %d payload: %w", e.Seq, err)
	}
	return c, nil
}

// ValidHash reports whether s looks like an audit hash (64 lowercase hex).
func ValidHash(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// Events lists constructors for every event of this package.
func Events() []func() domain.Event {
	return []func() domain.Event{func() domain.Event { return &CompletionRecorded{} }}
}
