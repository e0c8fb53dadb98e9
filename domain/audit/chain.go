package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
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
// bodies, never their text.
type Completion struct {
	AccountID        uuid.UUID `json:"account_id"`
	KeyID            uuid.UUID `json:"key_id"`
	RequestID        string    `json:"request_id"`
	RequestHash      string    `json:"request_hash"`
	ResponseHash     string    `json:"response_hash"`
	Tier             string    `json:"tier"`
	Model            string    `json:"model"`
	Vendor           string    `json:"vendor"`
	Difficulty       float64   `json:"difficulty"`
	Stream           bool      `json:"stream"`
	PromptTokens     int64     `json:"prompt_tokens"`
	CompletionTokens int64     `json:"completion_tokens"`
	// UsageEstimated is true when the upstream did not report usage and
	// the gateway counted the tokens itself.
	UsageEstimated bool  `json:"usage_estimated"`
	CostMicroUSD   int64 `json:"cost_micro_usd"`
	CacheHit       bool  `json:"cache_hit"`
	// Outcome is "ok", or "cut" for a stream the upstream broke off.
	Outcome    string    `json:"outcome"`
	Attempts   int       `json:"attempts"`
	UpstreamMS float64   `json:"upstream_ms"`
	TotalMS    float64   `json:"total_ms"`
	StartedAt  time.Time `json:"started_at"`
}

// Day is the UTC day of the completion, for rollups.
func (c Completion) Day() string { return c.StartedAt.UTC().Format("2006-01-02") }

// CompletionRecorded is one entry of the chain. Payload holds the
// Completion as canonical JSON; Hash = SHA-256(PrevHash ‖ Payload).
type CompletionRecorded struct {
	Seq      uint64          `json:"seq"`
	PrevHash string          `json:"prev_hash"`
	Hash     string          `json:"hash"`
	Payload  json.RawMessage `json:"payload"`
}

func (CompletionRecorded) EventType() string  { return "CompletionRecorded" }
func (CompletionRecorded) SchemaVersion() int { return 1 }

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

// Hash returns hex(SHA-256(prev ‖ payload)) for a hex prev hash.
func Hash(prevHex string, payload []byte) (string, error) {
	prev, err := hex.DecodeString(prevHex)
	if err != nil || len(prev) != sha256.Size {
		return "", fmt.Errorf("previous hash %q is not 64 hex digits", prevHex)
	}
	h := sha256.New()
	h.Write(prev)
	h.Write(payload)
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Link builds the entry with sequence number seq after prevHex.
func Link(seq uint64, prevHex string, payload []byte) (*CompletionRecorded, error) {
	h, err := Hash(prevHex, payload)
	if err != nil {
		return nil, err
	}
	return &CompletionRecorded{Seq: seq, PrevHash: prevHex, Hash: h, Payload: payload}, nil
}

// Verify checks one entry against the hash of the entry before it (Genesis
// for seq 0): the link, the hash of its payload, and that the payload is
// canonical JSON. It returns nil or a description of what is broken.
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
	h, err := Hash(e.PrevHash, e.Payload)
	if err != nil {
		return err
	}
	if h != e.Hash {
		return fmt.Errorf("hash %s does not match SHA-256(prev_hash ‖ payload) = %s", e.Hash, h)
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
