package secretkey_test

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/arr-dev/arr/adapters/secretkey"
)

func TestParse(t *testing.T) {
	want := bytes.Repeat([]byte{0x5c}, secretkey.Size)
	cases := []struct {
		name, value string
		want        []byte
		err         string
	}{
		{"hex", hex.EncodeToString(want), want, ""},
		{"base64 with a newline", base64.StdEncoding.EncodeToString(want) + "\n", want, ""},
		{"too short", hex.EncodeToString(want[:16]), nil, "a key must be 32 bytes"},
		{"not a key", "secret-words", nil, "a key must be 32 bytes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := secretkey.Parse(tc.value)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || strings.Contains(err.Error(), tc.value) {
					t.Fatalf("Parse = %v, want %q without the value", err, tc.err)
				}
				return
			}
			if err != nil || !bytes.Equal(got, tc.want) {
				t.Fatalf("Parse = %x, %v", got, err)
			}
		})
	}
}

// TestNew: a new key is random, and its text reads back as the key.
func TestNew(t *testing.T) {
	a, text, err := secretkey.New()
	if err != nil || len(a) != secretkey.Size {
		t.Fatalf("New = %x, %v", a, err)
	}
	back, err := secretkey.Parse(text)
	if err != nil || !bytes.Equal(back, a) {
		t.Fatalf("Parse(New's text) = %x, %v; want %x", back, err, a)
	}
	b, _, _ := secretkey.New()
	if bytes.Equal(a, b) {
		t.Fatal("two new keys are equal")
	}
}
