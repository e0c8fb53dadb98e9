package sqlproj

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// refValueAt is valueAt by encoding/json: each step decodes an object into
// a map (where a repeated key keeps its last value, as in jsonb).
func refValueAt(doc []byte, keys []string) ([]byte, bool) {
	v := json.RawMessage(doc)
	for _, k := range keys {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(v, &m); err != nil {
			return nil, false // not an object
		}
		var ok bool
		if v, ok = m[k]; !ok {
			return nil, false
		}
	}
	return bytes.TrimSpace(v), true
}

func TestValueAt(t *testing.T) {
	cases := []struct {
		doc  string
		keys []string
		want string // "" for none
	}{
		{`{"a":1}`, []string{"a"}, `1`},
		{` { "a" : { "b" : "x y" } } `, []string{"a", "b"}, `"x y"`},
		{`{"a":{"b":1},"a":{"c":2}}`, []string{"a", "c"}, `2`},
		{`{"a":{"b":1},"a":{"c":2}}`, []string{"a", "b"}, ``},
		{`{"m\u006fdel":"q","model":"r","mod\u0065l":"s"}`, []string{"model"}, `"s"`},
		{`{"a":"}\"{[","b":[1,{"a":2}],"c":null}`, []string{"b"}, `[1,{"a":2}]`},
		{`{"a":"}\"{[","b":[1,{"a":2}],"c":null}`, []string{"c"}, `null`},
		{`{"a":"}\"{[","b":[1,{"a":2}],"c":null}`, []string{"a"}, `"}\"{["`},
		{`{"a":[{"b":1}]}`, []string{"a", "b"}, ``},
		{`{"a":"str"}`, []string{"a", "b"}, ``},
		{`{"a":null}`, []string{"a", "b"}, ``},
		{`{}`, []string{"a"}, ``},
		{`[1]`, []string{"a"}, ``},
		{`{"a":-1.5e+3,"b":true}`, []string{"a"}, `-1.5e+3`},
		{`{"\\":1,"\"":2}`, []string{`"`}, `2`},
		{`{"é ☃":{"k":"\u00e9"}}`, []string{"é ☃", "k"}, `"\u00e9"`},
	}
	for _, c := range cases {
		got, ok, err := valueAt([]byte(c.doc), c.keys)
		if err != nil {
			t.Errorf("valueAt(%s, %q): %v", c.doc, c.keys, err)
			continue
		}
		if string(got) != c.want || ok != (c.want != "") {
			t.Errorf("valueAt(%s, %q) = %s, %v; want %s", c.doc, c.keys, got, ok, c.want)
		}
		ref, rok := refValueAt([]byte(c.doc), c.keys)
		if string(ref) != c.want || rok != ok {
			t.Errorf("the reference finds %s, %v in %s at %q: the case is wrong", ref, rok, c.doc, c.keys)
		}
	}
}

// FuzzValueAt: on any valid JSON document valueAt finds what encoding/json
// finds, and on anything else it fails without panicking.
func FuzzValueAt(f *testing.F) {
	for _, s := range []string{`{"a":{"b":[1,"x"]},"a":{"b":2}}`, `{"a\u0062":"}","c":{"d":null}}`, `{"a":1.5,"b":"\\\""}`, `[{"a":1}]`, `{"a":`} {
		f.Add(s, "a", "b")
	}
	f.Fuzz(func(t *testing.T, doc, k1, k2 string) {
		if !utf8.ValidString(doc) || !utf8.ValidString(k1) || !utf8.ValidString(k2) || strings.ContainsRune(doc+k1+k2, utf8.RuneError) {
			return // encoding/json rewrites invalid UTF-8; PostgreSQL refuses it
		}
		for _, keys := range [][]string{{k1}, {k1, k2}} {
			got, ok, err := valueAt([]byte(doc), keys)
			if !json.Valid([]byte(doc)) {
				continue
			}
			if err != nil {
				t.Fatalf("valueAt(%s, %q): %v", doc, keys, err)
			}
			ref, rok := refValueAt([]byte(doc), keys)
			if ok != rok || !bytes.Equal(got, ref) {
				t.Fatalf("valueAt(%s, %q) = %s, %v; encoding/json finds %s, %v", doc, keys, got, ok, ref, rok)
			}
		}
	})
}
