package sqlproj

import (
	"bytes"
	"encoding/json"
	"errors"
)

// errBadJSON is a document valueAt cannot walk: the log holds only valid
// JSON (the events table's column is json), so this is a bug or damage.
var errBadJSON = errors.New("malformed JSON")

// valueAt returns the JSON text of the value at keys in doc, as jsonb's
// doc -> keys[0] -> keys[1] … finds it: each step takes an object's
// member by key (its last member of that key when the key repeats, the one
// jsonb keeps; keys compared unescaped), and a step on anything but an
// object, or on a missing key, finds nothing (ok false, where jsonb gives
// NULL). It reads the document once and allocates nothing unless a key is
// written with escapes.
func valueAt(doc []byte, keys []string) (value []byte, ok bool, err error) {
	v := doc
	for _, key := range keys {
		i := skipSpace(v, 0)
		if i >= len(v) || v[i] != '{' {
			return nil, false, nil
		}
		var found []byte
		i = skipSpace(v, i+1)
		if i < len(v) && v[i] == '}' {
			return nil, false, nil
		}
		for {
			if i >= len(v) || v[i] != '"' {
				return nil, false, errBadJSON
			}
			kEnd, escaped, err := stringEnd(v, i)
			if err != nil {
				return nil, false, err
			}
			match, err := keyIs(v[i:kEnd], escaped, key)
			if err != nil {
				return nil, false, err
			}
			i = skipSpace(v, kEnd)
			if i >= len(v) || v[i] != ':' {
				return nil, false, errBadJSON
			}
			i = skipSpace(v, i+1)
			end, err := valueEnd(v, i)
			if err != nil {
				return nil, false, err
			}
			if match {
				found = v[i:end]
			}
			i = skipSpace(v, end)
			if i >= len(v) {
				return nil, false, errBadJSON
			}
			if v[i] == '}' {
				break
			}
			if v[i] != ',' {
				return nil, false, errBadJSON
			}
			i = skipSpace(v, i+1)
		}
		if found == nil {
			return nil, false, nil
		}
		v = found
	}
	return v, true, nil
}

func skipSpace(v []byte, i int) int {
	for i < len(v) && (v[i] == ' ' || v[i] == '\t' || v[i] == '\n' || v[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the offset after the string that opens at v[i] (a
// quote), and whether it holds a backslash escape.
func stringEnd(v []byte, i int) (end int, escaped bool, err error) {
	i++
	for {
		j := bytes.IndexAny(v[i:], `"\`)
		if j < 0 {
			return 0, false, errBadJSON
		}
		i += j
		if v[i] == '"' {
			return i + 1, escaped, nil
		}
		escaped = true
		i += 2 // the backslash and the byte it escapes (\uXXXX's hex digits need no care)
		if i > len(v) {
			return 0, false, errBadJSON
		}
	}
}

// keyIs reports whether the JSON string quoted (with its quotes) is key.
func keyIs(quoted []byte, escaped bool, key string) (bool, error) {
	if !escaped {
		return len(quoted) == len(key)+2 && string(quoted[1:len(quoted)-1]) == key, nil
	}
	var s string
	if err := json.Unmarshal(quoted, &s); err != nil {
		return false, errBadJSON
	}
	return s == key, nil
}

// valueEnd returns the offset after the value that starts at v[i].
func valueEnd(v []byte, i int) (int, error) {
	if i >= len(v) {
		return 0, errBadJSON
	}
	switch v[i] {
	case '"':
		end, _, err := stringEnd(v, i)
		return end, err
	case '{', '[':
		depth := 0
		for i < len(v) {
			switch v[i] {
			case '"':
				end, _, err := stringEnd(v, i)
				if err != nil {
					return 0, err
				}
				i = end
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, nil
				}
			}
			i++
		}
		return 0, errBadJSON
	default: // a number, true, false or null
		start := i
		for i < len(v) && v[i] != ',' && v[i] != '}' && v[i] != ']' && v[i] != ' ' && v[i] != '\t' && v[i] != '\n' && v[i] != '\r' {
			i++
		}
		if i == start {
			return 0, errBadJSON
		}
		return i, nil
	}
}
