package gateway

import (
	"testing"

	"github.com/arr-dev/arr/domain/routing"
)

// FuzzEmbeddingRequest: an embeddings body is refused with a 4xx, or it
// has from 1 to 2048 inputs, none empty, and is routed (or refused by
// routing with a 4xx), without a panic.
func FuzzEmbeddingRequest(f *testing.F) {
	for _, s := range []string{
		`{"model":"auto","input":"hi"}`,
		`{"model":"embed-small","input":["a","b"],"encoding_format":"base64","dimensions":64,"user":"u"}`,
		`{"model":"text-embedding-3-large","input":[[1,2,3],[4]],"dimensions":3072}`,
		`{"input":[1,2,3]}`, `{"input":[]}`, `{"input":""}`, `{"input":["a",""]}`, `{"input":["a",[1]]}`, `{"input":[[1],"a"]}`,
		`{"input":[-1]}`, `{"input":[1.5]}`, `{"input":"x","dimensions":0}`, `{"input":"x","encoding_format":"int8"}`,
		`{"model":"nano","input":"x"}`, `{"model":1,"input":"x"}`, `[]`, `null`, `{"input":{"a":1}}`, `{"input":[[]]}`,
	} {
		f.Add([]byte(s))
	}
	cat, err := routing.ParseCatalog(routing.DefaultCatalogJSON())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := parseEmbeddingRequest(body)
		if err != nil {
			refusedWith4xx(t, err)
			return
		}
		if len(r.Inputs) == 0 || len(r.Inputs) > maxEmbeddingInputs {
			t.Fatalf("accepted %d inputs", len(r.Inputs))
		}
		for i, in := range r.Inputs {
			if in.Tokens == nil && in.Text == "" || in.Tokens != nil && len(in.Tokens) == 0 {
				t.Fatalf("accepted an empty input %d: %+v", i, in)
			}
			for _, tok := range in.Tokens {
				if tok < 0 {
					t.Fatalf("accepted the token %d", tok)
				}
			}
		}
		if _, err := routing.RouteEmbedding(cat, routing.EmbeddingRequest{Model: r.Model, Dimensions: r.Dimensions, InputTokens: 1}); err != nil {
			refusedWith4xx(t, err)
		}
	})
}
