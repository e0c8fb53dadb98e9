package research

// A strict JSON decoder for the documents of structured output (the
// request's schema and the model's reply): one JSON value, no member
// twice in an object, every number a finite float64 of sane magnitude —
// before JSON Schema's library sees them, since it computes numbers
// exactly (1e-999999 is 10^999999 as a big.Rat).

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/arr-dev/arr/domain/text"
)

// Bounds of a number in a schema or a reply.
const (
	// maxNumberChars bounds a number's JSON text.
	maxNumberChars = 32
	// maxMagnitude and minMagnitude bound a nonzero number's absolute
	// value.
	maxMagnitude = 1e300
	minMagnitude = 1e-300
	// maxStrictDepth bounds how deeply a decoded document nests.
	maxStrictDepth = 64
)

// strictDoc is a decoded document: value as JSON Schema's library takes
// it (map[string]any, []any, string, json.Number, bool, nil) and text,
// its compact re-encoding, members in the order written.
type strictDoc struct {
	value any
	text  string
}

// decodeStrict decodes s as one JSON value, refusing a member given twice
// in an object and a number that is not a finite float64 within
// [minMagnitude, maxMagnitude] (or 0) in at most maxNumberChars.
func decodeStrict(s string) (strictDoc, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var out bytes.Buffer
	v, err := strictValue(dec, &out, 0)
	if err != nil {
		return strictDoc{}, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return strictDoc{}, errors.New("more than one JSON value")
	}
	return strictDoc{value: v, text: out.String()}, nil
}

// strictValue reads the next value of dec, writing it compact to out.
func strictValue(dec *json.Decoder, out *bytes.Buffer, depth int) (any, error) {
	if depth > maxStrictDepth {
		return nil, fmt.Errorf("nests more than %d levels deep", maxStrictDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("not valid JSON: %w", err)
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '{' {
			return strictObject(dec, out, depth)
		}
		if t == '[' {
			return strictArray(dec, out, depth)
		}
		return nil, fmt.Errorf("not valid JSON: unexpected %q", t)
	case json.Number:
		if err := checkNumber(t); err != nil {
			return nil, err
		}
		out.WriteString(t.String())
		return t, nil
	case string:
		writeString(out, t)
		return t, nil
	case bool:
		out.WriteString(strconv.FormatBool(t))
		return t, nil
	case nil:
		out.WriteString("null")
		return nil, nil
	}
	return nil, fmt.Errorf("not valid JSON: unexpected token %v", tok)
}

func strictObject(dec *json.Decoder, out *bytes.Buffer, depth int) (any, error) {
	m := map[string]any{}
	out.WriteByte('{')
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("not valid JSON: %w", err)
		}
		k, _ := tok.(string)
		if _, dup := m[k]; dup {
			return nil, fmt.Errorf("the member %q is given twice in one object", text.Bound(k, 60))
		}
		if len(m) > 0 {
			out.WriteByte(',')
		}
		writeString(out, k)
		out.WriteByte(':')
		if m[k], err = strictValue(dec, out, depth+1); err != nil {
			return nil, err
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("not valid JSON: %w", err)
	}
	out.WriteByte('}')
	return m, nil
}

func strictArray(dec *json.Decoder, out *bytes.Buffer, depth int) (any, error) {
	a := []any{}
	out.WriteByte('[')
	for dec.More() {
		if len(a) > 0 {
			out.WriteByte(',')
		}
		v, err := strictValue(dec, out, depth+1)
		if err != nil {
			return nil, err
		}
		a = append(a, v)
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("not valid JSON: %w", err)
	}
	out.WriteByte(']')
	return a, nil
}

// writeString writes s as a JSON string (as encoding/json writes it).
func writeString(out *bytes.Buffer, s string) {
	b, _ := json.Marshal(s)
	out.Write(b)
}

// checkNumber refuses a number arr will not compute with.
func checkNumber(n json.Number) error {
	s := n.String()
	if len(s) > maxNumberChars {
		return fmt.Errorf("the number %s… is %d characters; at most %d are taken", s[:16], len(s), maxNumberChars)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return fmt.Errorf("the number %s is beyond a 64-bit float's range", s)
	}
	a := math.Abs(f)
	mantissa, _, _ := strings.Cut(strings.ToLower(s), "e")
	if a > maxMagnitude || (a != 0 && a < minMagnitude) || (a == 0 && strings.Trim(mantissa, "-+0.") != "") {
		return fmt.Errorf("the number %s is out of range: a nonzero number's magnitude is from %g to %g", s, minMagnitude, maxMagnitude)
	}
	return nil
}
