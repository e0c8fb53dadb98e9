package upstreamtest

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"net/http"
)

// nativeDimensions are the vector lengths of well-known embedding models.
var nativeDimensions = map[string]int{
	"text-embedding-3-small": 1536, "text-embedding-3-large": 3072, "text-embedding-ada-002": 1536,
	"mistral-embed": 1024, "gemini-embedding-001": 3072,
}

// EmbeddingRequest is the part of an embeddings request the server reads.
type EmbeddingRequest struct {
	Model          string          `json:"model"`
	Input          json.RawMessage `json:"input"`
	EncodingFormat string          `json:"encoding_format"`
	Dimensions     *int            `json:"dimensions"`
}

// embedInput is one input: its text, or its tokens.
type embedInput struct {
	text   string
	tokens []int64
	isTok  bool
}

// parseInputs reads input as OpenAI sends it: a string, an array of
// strings, an array of tokens or an array of token arrays.
func parseInputs(raw json.RawMessage) ([]embedInput, error) {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []embedInput{{text: one}}, nil
	}
	var texts []string
	if json.Unmarshal(raw, &texts) == nil {
		out := make([]embedInput, len(texts))
		for i, t := range texts {
			out[i] = embedInput{text: t}
		}
		return out, nil
	}
	var toks []int64
	if json.Unmarshal(raw, &toks) == nil {
		return []embedInput{{tokens: toks, isTok: true}}, nil
	}
	var lists [][]int64
	if err := json.Unmarshal(raw, &lists); err != nil {
		return nil, fmt.Errorf("input must be a string, an array of strings or of token arrays")
	}
	out := make([]embedInput, len(lists))
	for i, l := range lists {
		out[i] = embedInput{tokens: l, isTok: true}
	}
	return out, nil
}

// Vector is the embedding the server returns for model and one input: a
// deterministic unit vector of dims dimensions. Tests compare with it.
func Vector(model string, input any, dims int) []float32 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00%v", model, input)
	x := h.Sum64() | 1
	v := make([]float32, dims)
	var norm float64
	for i := range v {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		f := float64(int64(x>>11))/float64(1<<52) - 1
		v[i] = float32(f)
		norm += f * f
	}
	norm = math.Sqrt(norm)
	for i := range v {
		v[i] = float32(float64(v[i]) / norm)
	}
	return v
}

func (s *Server) embed(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	var raw map[string]any
	var req EmbeddingRequest
	if json.Unmarshal(body, &raw) != nil || json.Unmarshal(body, &req) != nil {
		writeError(w, http.StatusBadRequest, "not an embeddings request")
		return
	}
	inputs, err := parseInputs(req.Input)
	if err != nil || len(inputs) == 0 {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("bad input: %v", err))
		return
	}
	b := s.behavior(req.Model, raw, r.Header.Get("Authorization"))
	if b.injected(w, r, req.Model, writeError) {
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(embeddingReply(req, inputs, b))
}

// embeddingReply is OpenAI's list of embeddings for the inputs.
func embeddingReply(req EmbeddingRequest, inputs []embedInput, b Behavior) map[string]any {
	dims := b.Dimensions
	if dims == 0 {
		dims = nativeDimensions[req.Model]
	}
	if dims == 0 {
		dims = 16
	}
	if req.Dimensions != nil {
		dims = *req.Dimensions
	}
	data := make([]any, len(inputs))
	tokens := 0
	for i, in := range inputs {
		var v []float32
		if in.isTok {
			v = Vector(req.Model, in.tokens, dims)
			tokens += len(in.tokens)
		} else {
			v = Vector(req.Model, in.text, dims)
			tokens += len(in.text)/4 + 1
		}
		var emb any = v
		if req.EncodingFormat == "base64" {
			buf := make([]byte, 4*len(v))
			for j, f := range v {
				binary.LittleEndian.PutUint32(buf[4*j:], math.Float32bits(f))
			}
			emb = base64.StdEncoding.EncodeToString(buf)
		}
		data[i] = map[string]any{"object": "embedding", "index": i, "embedding": emb}
	}
	out := map[string]any{"object": "list", "data": data, "model": req.Model}
	if !b.OmitUsage {
		out["usage"] = map[string]any{"prompt_tokens": tokens, "total_tokens": tokens}
	}
	return out
}
