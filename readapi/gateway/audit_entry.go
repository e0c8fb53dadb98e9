package gateway

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strconv"
	"time"

	"encoding/json"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/audit"
	"github.com/arr-dev/arr/readapi/httpx"
)

// AuditorKeyHeader carries the operator's auditor key (the server's
// ARR_AUDITOR_KEY) on GET /v1/audit/{hash}.
const AuditorKeyHeader = "X-Auditor-Key"

// auditEntryBody is the body of GET /v1/audit/{hash}. Everyone holding the
// hash sees the entry's place in the chain and payload_sha256, enough to
// check a link-2 entry; Payload is there only for the owning account and
// the auditor.
type auditEntryBody struct {
	Object   string         `json:"object"`
	View     audit.Audience `json:"view"`
	Hash     string         `json:"hash"`
	PrevHash string         `json:"prev_hash"`
	NextHash string         `json:"next_hash"`
	Seq      uint64         `json:"seq"`
	Position uint64         `json:"position"`
	// InclusionProof is where the proof that the entry's event is in the
	// signed log is served (GET /v1/log/proof/inclusion).
	InclusionProof string          `json:"inclusion_proof"`
	RecordedAt     string          `json:"recorded_at"`
	PayloadSHA256  string          `json:"payload_sha256"`
	Payload        json.RawMessage `json:"payload,omitempty"`
	Verified       bool            `json:"verified"`
	Problem        string          `json:"problem"`
	Chain          chainRules      `json:"chain"`
}

// chainRules says how to check an entry: its link algorithm, every link
// algorithm of the chain, and how the digests in it are made.
type chainRules struct {
	Link             int               `json:"link"`
	Algorithm        string            `json:"algorithm"`
	PublicVerifiable bool              `json:"public_verifiable"`
	Algorithms       map[string]string `json:"algorithms"`
	PayloadSHA256    string            `json:"payload_sha256"`
	KeyedHashes      string            `json:"request_response_hashes"`
	GenesisPrevHash  string            `json:"genesis_prev_hash"`
}

// auditEntry answers GET /v1/audit/{hash}. Without credentials, or with a
// key of another account, it is the public view; with a key of the account
// that made the completion, or the auditor key, the payload is added. A
// key or auditor key that is sent but not valid is 401 (OptionalKeyAuth,
// isAuditor).
func (s *completer) auditEntry(c *gin.Context) error {
	auditor, err := s.isAuditor(c)
	if err != nil {
		return err
	}
	e, err := s.entry(c.Request.Context(), c.Param("hash"))
	if err != nil {
		return err
	}
	p, _ := httpx.PrincipalOf(c) // the zero principal (uuid.Nil) without a key
	view := audit.AudienceOf(e.Completion.AccountID, p.AccountID, auditor)
	out := auditEntryBody{
		Object: "audit_entry", View: view, Hash: e.Hash, PrevHash: e.PrevHash, NextHash: e.NextHash,
		Seq: e.Seq, Position: e.Position, RecordedAt: e.RecordedAt.Format(time.RFC3339Nano),
		InclusionProof: "/v1/log/proof/inclusion?position=" + strconv.FormatUint(e.Position, 10),
		PayloadSHA256:  e.PayloadSHA256, Verified: e.Verified, Problem: e.Problem,
		Chain: chainRules{
			Link: e.Link, Algorithm: linkRule(e.Link), PublicVerifiable: e.Link == audit.LinkV2,
			Algorithms:    map[string]string{strconv.Itoa(audit.LinkV1): audit.LinkV1Rule, strconv.Itoa(audit.LinkV2): audit.LinkV2Rule},
			PayloadSHA256: audit.PayloadSHA256Rule, KeyedHashes: audit.KeyedHashRule, GenesisPrevHash: audit.Genesis,
		},
	}
	c.Header("Vary", "Authorization, "+AuditorKeyHeader)
	if view.SeesPayload() {
		out.Payload = json.RawMessage(e.Payload)
		c.Header("Cache-Control", "private, no-store")
	}
	c.PureJSON(http.StatusOK, out) // payload goes out byte for byte (no HTML escaping), so payload_sha256 checks
	return nil
}

// isAuditor reports whether the request carries the configured auditor
// key. One that is sent but wrong, or sent while none is configured, is
// 401, so an auditor learns at once that it did not apply. The keys are
// compared as SHA-256 digests in constant time, and never logged.
func (s *completer) isAuditor(c *gin.Context) (bool, error) {
	got := c.GetHeader(AuditorKeyHeader)
	if got == "" {
		return false, nil
	}
	if s.o.AuditorKey == "" {
		return false, &domain.Error{Kind: domain.ErrUnauthenticated, Code: "auditor_key_disabled",
			Message: "the auditor key is off on this server (ARR_AUDITOR_KEY is unset); send no " + AuditorKeyHeader + " for the public view"}
	}
	g, w := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(s.o.AuditorKey))
	if subtle.ConstantTimeCompare(g[:], w[:]) != 1 {
		return false, &domain.Error{Kind: domain.ErrUnauthenticated, Code: "invalid_auditor_key",
			Message: "the " + AuditorKeyHeader + " header does not match the configured auditor key"}
	}
	return true, nil
}

// linkRule is the rule of link algorithm link in words.
func linkRule(link int) string {
	if link == audit.LinkV2 {
		return audit.LinkV2Rule
	}
	return audit.LinkV1Rule
}
