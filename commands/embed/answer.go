package embed

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/arr-dev/arr/commands/complete"
	"github.com/arr-dev/arr/domain/routing"
)

// answer is an upstream's reply that passed the checks: one vector per
// input, in input order, each of length dims.
type answer struct {
	model routing.EmbeddingModel
	// upstreamModel is the model the upstream says answered.
	upstreamModel string
	vectors       []vector
	dims          int
	// promptTokens is the upstream's count; -1 when it reported none.
	promptTokens int64
	attempts     int
	upstreamTime time.Duration
}

// vector is one embedding as the upstream sent it: its JSON array text,
// or its float32s when it came as base64.
type vector struct {
	numbers json.RawMessage
	floats  []float32
}

type upstreamReply struct {
	Data []struct {
		Index     *int            `json:"index"`
		Embedding json.RawMessage `json:"embedding"`
	} `json:"data"`
	Model string `json:"model"`
	Usage *struct {
		PromptTokens *int64 `json:"prompt_tokens"`
	} `json:"usage"`
}

// parseAnswer checks an upstream's reply to r from m: a list with one
// embedding per input (by index), each as long as r asks (its dimensions,
// else m's own).
func parseAnswer(data []byte, m routing.EmbeddingModel, r *Request) (*answer, error) {
	var rep upstreamReply
	if err := json.Unmarshal(data, &rep); err != nil {
		return nil, fmt.Errorf("the reply is not an embeddings list: %v", err)
	}
	if len(rep.Data) != len(r.Inputs) {
		return nil, fmt.Errorf("the reply has %d embeddings for %d inputs", len(rep.Data), len(r.Inputs))
	}
	a := &answer{model: m, upstreamModel: rep.Model, vectors: make([]vector, len(r.Inputs)), dims: m.Dimensions, promptTokens: -1}
	if r.Dimensions > 0 {
		a.dims = r.Dimensions
	}
	for i, d := range rep.Data {
		idx := i
		if d.Index != nil {
			idx = *d.Index
		}
		if idx < 0 || idx >= len(a.vectors) || a.vectors[idx].numbers != nil || a.vectors[idx].floats != nil {
			return nil, fmt.Errorf("embedding %d has a bad or repeated index %d", i, idx)
		}
		v, n, err := readVector(d.Embedding)
		if err != nil {
			return nil, fmt.Errorf("embedding %d: %v", idx, err)
		}
		if n != a.dims {
			return nil, fmt.Errorf("embedding %d has %d dimensions where %d were expected", idx, n, a.dims)
		}
		a.vectors[idx] = v
	}
	if rep.Usage != nil && rep.Usage.PromptTokens != nil && *rep.Usage.PromptTokens >= 0 {
		a.promptTokens = *rep.Usage.PromptTokens
	}
	return a, nil
}

// readVector reads an embedding sent as a JSON array of numbers or as
// base64 little-endian float32s, and its length.
func readVector(raw json.RawMessage) (vector, int, error) {
	var b64 string
	if json.Unmarshal(raw, &b64) == nil {
		buf, err := base64.StdEncoding.DecodeString(b64)
		if err != nil || len(buf)%4 != 0 {
			return vector{}, 0, errors.New("not base64 float32s")
		}
		fs := make([]float32, len(buf)/4)
		for i := range fs {
			fs[i] = math.Float32frombits(binary.LittleEndian.Uint32(buf[4*i:]))
		}
		return vector{floats: fs}, len(fs), nil
	}
	var nums []float64
	if err := json.Unmarshal(raw, &nums); err != nil {
		return vector{}, 0, errors.New("not an array of numbers")
	}
	return vector{numbers: raw}, len(nums), nil
}

// usage is the request's token count: the upstream's, else estimated.
func (a *answer) usage(r *Request) complete.Usage {
	if a.promptTokens >= 0 {
		return complete.Usage{Prompt: a.promptTokens}
	}
	return complete.Usage{Prompt: r.estimate(), Estimated: true}
}

type outItem struct {
	Object    string          `json:"object"`
	Index     int             `json:"index"`
	Embedding json.RawMessage `json:"embedding"`
}

type outUsage struct {
	PromptTokens int64 `json:"prompt_tokens"`
	TotalTokens  int64 `json:"total_tokens"`
}

type outList struct {
	Object string    `json:"object"`
	Data   []outItem `json:"data"`
	Model  string    `json:"model"`
	Usage  outUsage  `json:"usage"`
}

// encode writes OpenAI's list of embeddings, each vector as the client
// asked: JSON numbers (as the upstream sent them) or base64 float32s.
func (a *answer) encode(r *Request, u complete.Usage) ([]byte, error) {
	out := outList{Object: "list", Data: make([]outItem, len(a.vectors)), Model: a.upstreamModel, Usage: outUsage{u.Prompt, u.Prompt}}
	if out.Model == "" {
		out.Model = a.model.UpstreamModel
	}
	for i, v := range a.vectors {
		var err error
		out.Data[i] = outItem{Object: "embedding", Index: i}
		if out.Data[i].Embedding, err = v.encode(r.Base64); err != nil {
			return nil, err
		}
	}
	return json.Marshal(out)
}

func (v vector) encode(b64 bool) (json.RawMessage, error) {
	if !b64 && v.numbers != nil {
		return v.numbers, nil
	}
	fs := v.floats
	if fs == nil {
		if err := json.Unmarshal(v.numbers, &fs); err != nil {
			return nil, err
		}
	}
	if !b64 {
		return json.Marshal(fs)
	}
	buf := make([]byte, 4*len(fs))
	for i, f := range fs {
		binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(f))
	}
	return json.Marshal(base64.StdEncoding.EncodeToString(buf))
}
