package gateway

import (
	"encoding/base64"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/projections/logproofs"
	"github.com/arr-dev/arr/readapi/httpx"
)

// maxHeadsPage is the most heads GET /v1/log/heads returns at once.
const maxHeadsPage = 1000

// mountLog registers the public routes of the signed log, under perIP
// (their per-IP limit: they read the tree, and anyone may call them). With
// no log (the KurrentDB event store keeps no tree) they answer 503 saying
// why.
func mountLog(e *gin.Engine, log LogProofs, perIP gin.HandlerFunc) {
	l := &logRoutes{log: log}
	g := e.Group("/v1/log", handle(l.available), perIP)
	g.GET("/head", handle(l.head))
	g.GET("/heads", handle(l.heads))
	g.GET("/proof/inclusion", handle(l.inclusion))
	g.GET("/proof/consistency", handle(l.consistency))
}

type logRoutes struct{ log LogProofs }

func (l *logRoutes) available(*gin.Context) error {
	if l.log == nil {
		return &domain.Error{Kind: domain.ErrUnavailable, Code: "log_unavailable", Message: logproofs.Unavailable}
	}
	return nil
}

// headBody is a signed head as served.
type headBody struct {
	Object      string `json:"object"`
	Origin      string `json:"origin"`
	Size        uint64 `json:"tree_size"`
	RootHash    string `json:"root_hash"`
	Timestamp   string `json:"timestamp"`
	TimestampMS int64  `json:"timestamp_ms"`
	Checkpoint  string `json:"checkpoint"`
	VerifierKey string `json:"verifier_key"`
}

func headOf(h logproofs.Head) headBody {
	return headBody{Object: "log_head", Origin: h.Origin, Size: h.Size, RootHash: b64(h.Root[:]),
		Timestamp: time.UnixMilli(h.Timestamp).UTC().Format("2006-01-02T15:04:05.000Z07:00"), TimestampMS: h.Timestamp,
		Checkpoint: string(h.Checkpoint), VerifierKey: h.VerifierKey}
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func b64s(path [][]byte) []string {
	out := make([]string, len(path))
	for i, p := range path {
		out[i] = b64(p)
	}
	return out
}

// head answers GET /v1/log/head: the latest signed head.
func (l *logRoutes) head(c *gin.Context) error {
	if err := httpx.CheckQuery(c.Request.URL.RawQuery); err != nil {
		return err
	}
	h, err := l.log.LatestHead(c.Request.Context())
	if err != nil {
		return err
	}
	c.Header("Cache-Control", "no-cache")
	c.PureJSON(http.StatusOK, headOf(h))
	return nil
}

// heads answers GET /v1/log/heads?since=SIZE&limit=N: signed heads of
// size since or more, smallest first.
func (l *logRoutes) heads(c *gin.Context) error {
	if err := httpx.CheckQuery(c.Request.URL.RawQuery, "since", "limit"); err != nil {
		return err
	}
	since, _, err := uintParam(c, "since", 0)
	if err != nil {
		return err
	}
	limit, _, err := uintParam(c, "limit", 100)
	if err != nil {
		return err
	}
	if limit < 1 || limit > maxHeadsPage {
		return domain.Invalid("invalid_limit", "limit", "limit must be from 1 to %d", maxHeadsPage)
	}
	hs, err := l.log.Heads(c.Request.Context(), since, int(limit)+1)
	if err != nil {
		return err
	}
	more := len(hs) > int(limit)
	hs = hs[:min(len(hs), int(limit))]
	data := make([]headBody, len(hs))
	for i, h := range hs {
		data[i] = headOf(h)
	}
	c.PureJSON(http.StatusOK, gin.H{"object": "list", "data": data, "has_more": more})
	return nil
}

// inclusion answers GET /v1/log/proof/inclusion?position=P&size=N.
func (l *logRoutes) inclusion(c *gin.Context) error {
	if err := httpx.CheckQuery(c.Request.URL.RawQuery, "position", "size"); err != nil {
		return err
	}
	pos, given, err := uintParam(c, "position", 0)
	if err != nil {
		return err
	}
	if !given {
		return domain.Invalid("missing_position", "position", "position is required: the log position of the event to prove (an audit entry's position)")
	}
	size, sized, err := uintParam(c, "size", 0)
	if err != nil {
		return err
	}
	if sized && size == 0 {
		return domain.Invalid("invalid_size", "size", "size must be 1 or more (leave it out for the latest signed head's size)")
	}
	p, err := l.log.Inclusion(c.Request.Context(), pos, size)
	if err != nil {
		return err
	}
	body := gin.H{"object": "inclusion_proof", "position": p.Position, "leaf_index": p.LeafIndex, "tree_size": p.Size,
		"leaf_hash": b64(p.LeafHash[:]), "root_hash": b64(p.Root[:]), "audit_path": b64s(p.Path), "signed_head": nil}
	if p.Signed != nil {
		body["signed_head"] = headOf(*p.Signed)
	}
	if sized {
		c.Header("Cache-Control", "public, max-age=3600") // a proof for a size never changes
	}
	c.PureJSON(http.StatusOK, body)
	return nil
}

// consistency answers GET /v1/log/proof/consistency?first=M&second=N.
func (l *logRoutes) consistency(c *gin.Context) error {
	if err := httpx.CheckQuery(c.Request.URL.RawQuery, "first", "second"); err != nil {
		return err
	}
	first, given, err := uintParam(c, "first", 0)
	if err != nil {
		return err
	}
	if !given {
		return domain.Invalid("missing_first", "first", "first is required: the tree size of the head you hold")
	}
	second, sized, err := uintParam(c, "second", 0)
	if err != nil {
		return err
	}
	if err := logproofs.CheckConsistencySizes(first, second, sized); err != nil {
		return err
	}
	p, err := l.log.Consistency(c.Request.Context(), first, second)
	if err != nil {
		return err
	}
	if sized {
		c.Header("Cache-Control", "public, max-age=3600")
	}
	c.PureJSON(http.StatusOK, gin.H{"object": "consistency_proof", "first": p.First, "second": p.Second,
		"first_root_hash": b64(p.FirstRoot[:]), "second_root_hash": b64(p.SecondRoot[:]), "consistency": b64s(p.Path)})
	return nil
}

// uintParam reads an optional unsigned query parameter; a bad value is a
// 400.
func uintParam(c *gin.Context, name string, def uint64) (v uint64, given bool, err error) {
	s, given := c.GetQuery(name)
	if !given {
		return def, false, nil
	}
	v, err = strconv.ParseUint(s, 10, 64)
	if err != nil || (len(s) > 1 && s[0] == '0') {
		return 0, true, domain.Invalid("invalid_"+name, name, "%s must be a whole number written in decimal without leading zeros; got %q", name, s)
	}
	return v, true, nil
}
