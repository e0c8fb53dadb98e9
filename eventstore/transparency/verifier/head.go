package verifier

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Head is a signed tree head: the log's size and root at a moment. Its
// signed form is the note text Text returns (see the package comment).
type Head struct {
	// Origin names the log; it is also the key name of its signature.
	Origin string
	// Size is the number of leaves in the tree.
	Size uint64
	// Root is the tree's root hash at Size.
	Root [HashSize]byte
	// Timestamp is when the log signed the head, in milliseconds since
	// 1970-01-01T00:00:00Z. It is never negative.
	Timestamp int64
}

// maxOriginLen bounds an origin; a key name longer than this is a mistake.
const maxOriginLen = 255

// timestampPrefix starts the fourth line of a head's note text.
const timestampPrefix = "timestamp-ms "

// CheckOrigin reports whether origin can name a log: non-empty, at most 255
// bytes of UTF-8, with no Unicode space, no plus sign and no control
// character (the rules for a signed note's key name, which it also is).
func CheckOrigin(origin string) error {
	if origin == "" {
		return fmt.Errorf("%w: empty origin", ErrInvalid)
	}
	if len(origin) > maxOriginLen {
		return fmt.Errorf("%w: origin is %d bytes, at most %d", ErrInvalid, len(origin), maxOriginLen)
	}
	if !utf8.ValidString(origin) {
		return fmt.Errorf("%w: origin %q is not UTF-8", ErrInvalid, origin)
	}
	for _, r := range origin {
		if unicode.IsControl(r) {
			return fmt.Errorf("%w: origin %q holds control character %q", ErrInvalid, origin, r)
		}
	}
	if !validKeyName(origin) {
		return fmt.Errorf("%w: origin %q holds a space or a plus sign", ErrInvalid, origin)
	}
	return nil
}

// validKeyName reports whether name can name a key in a signed note:
// non-empty, with no Unicode space and no plus sign.
func validKeyName(name string) bool {
	return name != "" && !strings.ContainsFunc(name, func(r rune) bool { return unicode.IsSpace(r) || r == '+' })
}

// Text is the head's note text, the exact bytes its signature covers: four
// lines (origin, size, base64 root, "timestamp-ms" and the time), each
// ending in a newline.
func (h Head) Text() ([]byte, error) {
	if err := CheckOrigin(h.Origin); err != nil {
		return nil, err
	}
	if h.Timestamp < 0 {
		return nil, fmt.Errorf("%w: negative timestamp %d", ErrInvalid, h.Timestamp)
	}
	b := make([]byte, 0, len(h.Origin)+100)
	b = append(b, h.Origin...)
	b = append(b, '\n')
	b = strconv.AppendUint(b, h.Size, 10)
	b = append(b, '\n')
	b = base64.StdEncoding.AppendEncode(b, h.Root[:])
	b = append(b, '\n')
	b = append(b, timestampPrefix...)
	b = strconv.AppendInt(b, h.Timestamp, 10)
	b = append(b, '\n')
	return b, nil
}

// ParseHead parses a head's note text. It accepts exactly the bytes Text
// produces for some head and nothing else, so a head has one text only.
func ParseHead(text []byte) (Head, error) {
	lines := bytes.SplitAfter(text, []byte("\n"))
	if len(lines) != 5 || len(lines[4]) != 0 {
		return Head{}, fmt.Errorf("%w: a head is four lines each ending in a newline", ErrInvalid)
	}
	line := func(i int) string { return string(bytes.TrimSuffix(lines[i], []byte("\n"))) }
	var h Head
	h.Origin = line(0)
	size, err := strconv.ParseUint(line(1), 10, 64)
	if err != nil {
		return Head{}, fmt.Errorf("%w: head size %q is not a decimal number", ErrInvalid, line(1))
	}
	h.Size = size
	root, err := base64.StdEncoding.Strict().DecodeString(line(2))
	if err != nil || len(root) != HashSize {
		return Head{}, fmt.Errorf("%w: head root %q is not the base64 of %d bytes", ErrInvalid, line(2), HashSize)
	}
	h.Root = [HashSize]byte(root)
	ts, ok := bytes.CutPrefix([]byte(line(3)), []byte(timestampPrefix))
	if !ok {
		return Head{}, fmt.Errorf("%w: fourth head line %q does not start with %q", ErrInvalid, line(3), timestampPrefix)
	}
	if h.Timestamp, err = strconv.ParseInt(string(ts), 10, 64); err != nil {
		return Head{}, fmt.Errorf("%w: head timestamp %q is not a decimal number", ErrInvalid, ts)
	}
	canon, err := h.Text()
	if err != nil {
		return Head{}, err
	}
	if !bytes.Equal(canon, text) {
		return Head{}, fmt.Errorf("%w: head text is not in canonical form (leading zeros or signs?)", ErrInvalid)
	}
	return h, nil
}

// VerifyHead checks sig, a raw 64-byte Ed25519 signature, over the head's
// note text with the log's public key.
func VerifyHead(pub ed25519.PublicKey, head Head, sig []byte) error {
	if len(pub) != ed25519.PublicKeySize {
		return fmt.Errorf("%w: public key is %d bytes, want %d", ErrInvalid, len(pub), ed25519.PublicKeySize)
	}
	text, err := head.Text()
	if err != nil {
		return err
	}
	if len(sig) != ed25519.SignatureSize || !ed25519.Verify(pub, text, sig) {
		return fmt.Errorf("%w: signature on the head of %s at size %d does not verify with key %x", ErrInvalid, head.Origin, head.Size, []byte(pub))
	}
	return nil
}
