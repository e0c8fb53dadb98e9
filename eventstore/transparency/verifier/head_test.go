package verifier_test

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/arr-dev/arr/eventstore/transparency/verifier"
)

func testHead() verifier.Head {
	return verifier.Head{
		Origin:    "arr.example/log",
		Size:      8,
		Root:      [32]byte(roots[7]),
		Timestamp: 1700000000123,
	}
}

const testHeadText = "arr.example/log\n" +
	"8\n" +
	"XcnaeacGWamtVZy3Ad7ZoqudgjqtL0lgz+Nw7/RgQyg=\n" +
	"timestamp-ms 1700000000123\n"

// testKey is a fixed Ed25519 key: its seed is the bytes 0 to 31.
func testKey() ed25519.PrivateKey {
	seed := make([]byte, ed25519.SeedSize)
	for i := range seed {
		seed[i] = byte(i)
	}
	return ed25519.NewKeyFromSeed(seed)
}

func TestHeadText(t *testing.T) {
	want := testHeadText
	got, err := testHead().Text()
	if err != nil || string(got) != want {
		t.Fatalf("Text() = %q, %v; want %q", got, err, want)
	}
	back, err := verifier.ParseHead(got)
	if err != nil || back != testHead() {
		t.Fatalf("ParseHead(Text()) = %+v, %v; want %+v", back, err, testHead())
	}
	empty := verifier.Head{Origin: "o", Root: verifier.EmptyRoot()}
	text, err := empty.Text()
	if err != nil || string(text) != "o\n0\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\ntimestamp-ms 0\n" {
		t.Fatalf("empty head text = %q, %v", text, err)
	}
}

func TestHeadTextRejects(t *testing.T) {
	tests := []struct {
		name string
		edit func(*verifier.Head)
	}{
		{"empty origin", func(h *verifier.Head) { h.Origin = "" }},
		{"origin with a newline", func(h *verifier.Head) { h.Origin = "a\n8" }},
		{"origin with a space", func(h *verifier.Head) { h.Origin = "arr log" }},
		{"origin with a plus", func(h *verifier.Head) { h.Origin = "arr+log" }},
		{"origin not UTF-8", func(h *verifier.Head) { h.Origin = "arr\xff" }},
		{"origin too long", func(h *verifier.Head) { h.Origin = strings.Repeat("a", 256) }},
		{"negative timestamp", func(h *verifier.Head) { h.Timestamp = -1 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := testHead()
			tc.edit(&h)
			if _, err := h.Text(); !errors.Is(err, verifier.ErrInvalid) {
				t.Fatalf("err = %v, want ErrInvalid", err)
			}
		})
	}
}

func TestParseHeadRejects(t *testing.T) {
	good := testHeadText
	tests := []struct {
		name string
		text string
	}{
		{"no final newline", strings.TrimSuffix(good, "\n")},
		{"three lines", "arr.example/log\n8\nXcnaeacGWamtVZy3Ad7ZoqudgjqtL0lgz+Nw7/RgQyg=\n"},
		{"extra line", good + "more\n"},
		{"empty line after", good + "\n"},
		{"leading zero size", strings.Replace(good, "\n8\n", "\n08\n", 1)},
		{"signed size", strings.Replace(good, "\n8\n", "\n+8\n", 1)},
		{"negative size", strings.Replace(good, "\n8\n", "\n-8\n", 1)},
		{"size too large", strings.Replace(good, "\n8\n", "\n18446744073709551616\n", 1)},
		{"unpadded root", strings.Replace(good, "Qyg=", "Qyg", 1)},
		{"URL-alphabet root", strings.Replace(good, "+", "-", 1)},
		{"short root", strings.Replace(good, "XcnaeacGWamtVZy3Ad7ZoqudgjqtL0lgz+Nw7/RgQyg=", "XcnaeacGWamtVZy3Ad7ZoqudgjqtL0lgz+Nw7/Rg", 1)},
		{"hex root", strings.Replace(good, "XcnaeacGWamtVZy3Ad7ZoqudgjqtL0lgz+Nw7/RgQyg=", "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328", 1)},
		{"carriage returns", strings.ReplaceAll(good, "\n", "\r\n")},
		{"other fourth line", strings.Replace(good, "timestamp-ms", "timestamp", 1)},
		{"leading zero timestamp", strings.Replace(good, "ms 1700", "ms 01700", 1)},
		{"negative timestamp", strings.Replace(good, "ms 1700", "ms -1700", 1)},
		{"two spaces before the timestamp", strings.Replace(good, "ms 1700", "ms  1700", 1)},
		{"space in the origin", strings.Replace(good, "arr.example/log", "arr example", 1)},
		{"empty origin", strings.Replace(good, "arr.example/log", "", 1)},
		{"empty", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if h, err := verifier.ParseHead([]byte(tc.text)); !errors.Is(err, verifier.ErrInvalid) {
				t.Fatalf("ParseHead(%q) = %+v, %v; want ErrInvalid", tc.text, h, err)
			}
		})
	}
}

func TestVerifyHead(t *testing.T) {
	priv := testKey()
	pub := priv.Public().(ed25519.PublicKey)
	text, err := testHead().Text()
	if err != nil {
		t.Fatal(err)
	}
	sig := ed25519.Sign(priv, text)
	if err := verifier.VerifyHead(pub, testHead(), sig); err != nil {
		t.Fatalf("good signature: %v", err)
	}
	otherPub, _, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		pub  ed25519.PublicKey
		edit func(*verifier.Head)
		sig  []byte
	}{
		{"other size", pub, func(h *verifier.Head) { h.Size = 9 }, sig},
		{"other root", pub, func(h *verifier.Head) { h.Root[0] ^= 1 }, sig},
		{"other time", pub, func(h *verifier.Head) { h.Timestamp++ }, sig},
		{"other origin", pub, func(h *verifier.Head) { h.Origin = "arr.example/other" }, sig},
		{"invalid head", pub, func(h *verifier.Head) { h.Origin = "" }, sig},
		{"other key", otherPub, func(*verifier.Head) {}, sig},
		{"short key", pub[:31], func(*verifier.Head) {}, sig},
		{"no key", nil, func(*verifier.Head) {}, sig},
		{"altered signature", pub, func(*verifier.Head) {}, flipBit(sig, 10, 4)},
		{"truncated signature", pub, func(*verifier.Head) {}, sig[:63]},
		{"no signature", pub, func(*verifier.Head) {}, nil},
		{"signature over the root only", pub, func(*verifier.Head) {}, ed25519.Sign(priv, roots[7])},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := testHead()
			tc.edit(&h)
			if err := verifier.VerifyHead(tc.pub, h, tc.sig); !errors.Is(err, verifier.ErrInvalid) {
				t.Fatalf("err = %v, want ErrInvalid", err)
			}
		})
	}
}

// signedCheckpoint builds a signed checkpoint by hand, from the format's
// description in the package comment.
func signedCheckpoint(t testing.TB, priv ed25519.PrivateKey, keyName string, h verifier.Head) string {
	t.Helper()
	text, err := h.Text()
	if err != nil {
		t.Fatal(err)
	}
	return signNote(priv, keyName, string(text))
}

// signNote signs text as a C2SP signed note with one Ed25519 signature.
func signNote(priv ed25519.PrivateKey, keyName, text string) string {
	sig := binary.BigEndian.AppendUint32(nil, verifier.KeyID(keyName, priv.Public().(ed25519.PublicKey)))
	sig = append(sig, ed25519.Sign(priv, []byte(text))...)
	return text + "\n— " + keyName + " " + base64.StdEncoding.EncodeToString(sig) + "\n"
}

func TestOpenCheckpoint(t *testing.T) {
	priv := testKey()
	pub := priv.Public().(ed25519.PublicKey)
	h := testHead()
	msg := signedCheckpoint(t, priv, h.Origin, h)
	got, err := verifier.OpenCheckpoint([]byte(msg), h.Origin, pub)
	if err != nil || got != h {
		t.Fatalf("OpenCheckpoint = %+v, %v; want %+v", got, err, h)
	}

	other := h
	other.Origin = "arr.example/other"
	tests := []struct {
		name   string
		msg    string
		origin string
	}{
		{"another log's checkpoint signed by the same key", signedCheckpoint(t, priv, other.Origin, other), h.Origin},
		{"signed under another key name", signedCheckpoint(t, priv, other.Origin, h), h.Origin},
		{"expected another origin", msg, other.Origin},
		{"size altered after signing", strings.Replace(msg, "\n8\n", "\n9\n", 1), h.Origin},
		{"a signed note that is not a head", signNote(priv, h.Origin, "hello\n"), h.Origin},
		{"a head with an empty line before it", signNote(priv, h.Origin, "\n"+testHeadText), h.Origin},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got, err := verifier.OpenCheckpoint([]byte(tc.msg), tc.origin, pub); !errors.Is(err, verifier.ErrInvalid) {
				t.Fatalf("OpenCheckpoint = %+v, %v; want ErrInvalid", got, err)
			}
		})
	}
}
