package embed

import (
	"encoding/json"

	"github.com/arr-dev/arr/domain/routing"
)

// Request is a validated embeddings request. readapi/gateway's parser
// makes one from a POST /v1/embeddings body.
type Request struct {
	// Fields are the request's top-level fields as sent: all passed
	// upstream, except model, encoding_format and dimensions, which the
	// gateway sets.
	Fields map[string]json.RawMessage
	// Body is what the client sent; its keyed hash is the audit entry's
	// request_hash.
	Body []byte
	// Model is "auto" (or empty), an embedding tier or an embedding model
	// id.
	Model string
	// Inputs are the texts (or token arrays) to embed, in order; at least
	// one.
	Inputs []Input
	// Base64: the client asked for encoding_format base64 (each vector as
	// the base64 of its little-endian float32s); else float (JSON numbers).
	Base64 bool
	// Dimensions is the vector length asked for; 0: the model's own.
	Dimensions int
}

// Input is one input: a text, or (Tokens not nil) a token array.
type Input struct {
	Text   string
	Tokens []int64
}

// bound returns the most tokens the request can be (what a key's limits
// reserve): a token array counts exactly, a text at most one token per
// byte (every token of a byte-level tokenizer covers at least one byte);
// and the longest token array's length.
func (r *Request) bound() (total, longestTokens int64) {
	for _, in := range r.Inputs {
		if in.Tokens != nil {
			n := int64(len(in.Tokens))
			total += n
			longestTokens = max(longestTokens, n)
			continue
		}
		total += int64(len(in.Text))
	}
	return max(total, 1), longestTokens
}

// estimate is the request's size in tokens when the upstream reports
// none: a token array exactly, a text one token per 3 bytes, rounded up.
func (r *Request) estimate() int64 {
	var total int64
	for _, in := range r.Inputs {
		if in.Tokens != nil {
			total += int64(len(in.Tokens))
		} else {
			total += (int64(len(in.Text)) + 2) / 3
		}
	}
	return max(total, 1)
}

// upstreamBody is the request to send to m: the client's fields, the
// model replaced, the vectors asked for as JSON numbers (the gateway
// encodes them as the client asked), and dimensions when the client set
// it and m takes it (a model whose length cannot be chosen is routed only
// when its own length was asked for, and is not sent a parameter it may
// refuse).
func (r *Request) upstreamBody(m routing.EmbeddingModel) ([]byte, error) {
	out := make(map[string]json.RawMessage, len(r.Fields)+3)
	for k, v := range r.Fields {
		out[k] = v
	}
	out["model"], _ = json.Marshal(m.UpstreamModel)
	out["encoding_format"] = json.RawMessage(`"float"`)
	delete(out, "dimensions")
	if r.Dimensions > 0 && m.MinDimensions > 0 {
		out["dimensions"], _ = json.Marshal(r.Dimensions)
	}
	return json.Marshal(out)
}
