package verifier

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// algEd25519 is the signed-note signature type byte of Ed25519.
const algEd25519 = 0x01

// maxNoteSignatures bounds the signature lines OpenNote reads.
const maxNoteSignatures = 100

// KeyID is the signed-note key id of an Ed25519 key under a name: the first
// four bytes, big-endian, of SHA-256(name || 0x0A || 0x01 || public key).
func KeyID(name string, pub ed25519.PublicKey) uint32 {
	h := sha256.New()
	h.Write([]byte(name))
	h.Write([]byte{'\n', algEd25519})
	h.Write(pub)
	return binary.BigEndian.Uint32(h.Sum(nil))
}

// VerifierKey is the signed-note verifier key that publishes pub under
// name: name+<key id, 8 hex digits>+<base64(0x01 || public key)>.
func VerifierKey(name string, pub ed25519.PublicKey) (string, error) {
	if err := CheckOrigin(name); err != nil {
		return "", err
	}
	if len(pub) != ed25519.PublicKeySize {
		return "", fmt.Errorf("%w: public key is %d bytes, want %d", ErrInvalid, len(pub), ed25519.PublicKeySize)
	}
	key := append([]byte{algEd25519}, pub...)
	return fmt.Sprintf("%s+%08x+%s", name, KeyID(name, pub), base64.StdEncoding.EncodeToString(key)), nil
}

// ParseVerifierKey reads a verifier key as VerifierKey writes it, checking
// that its key id matches its name and key.
func ParseVerifierKey(vkey string) (name string, pub ed25519.PublicKey, err error) {
	// The name has no plus sign and the key id is hex; the base64 key may
	// hold plus signs of its own.
	parts := strings.SplitN(vkey, "+", 3)
	if len(parts) != 3 {
		return "", nil, fmt.Errorf("%w: a verifier key is name+keyid+key, got %d parts", ErrInvalid, len(parts))
	}
	name = parts[0]
	if err := CheckOrigin(name); err != nil {
		return "", nil, err
	}
	if len(parts[1]) != 8 {
		return "", nil, fmt.Errorf("%w: verifier key id %q is not 8 hex digits", ErrInvalid, parts[1])
	}
	id, err := strconv.ParseUint(parts[1], 16, 32)
	if err != nil {
		return "", nil, fmt.Errorf("%w: verifier key id %q is not 8 hex digits", ErrInvalid, parts[1])
	}
	key, err := base64.StdEncoding.Strict().DecodeString(parts[2])
	if err != nil || len(key) != 1+ed25519.PublicKeySize || key[0] != algEd25519 {
		return "", nil, fmt.Errorf("%w: verifier key %q is not the base64 of 0x01 and a 32-byte Ed25519 key", ErrInvalid, parts[2])
	}
	pub = ed25519.PublicKey(key[1:])
	if KeyID(name, pub) != uint32(id) {
		return "", nil, fmt.Errorf("%w: verifier key id %s does not match its name and key", ErrInvalid, parts[1])
	}
	// One key, one spelling: lower-case hex, no line breaks in the base64.
	if canon, _ := VerifierKey(name, pub); canon != vkey {
		return "", nil, fmt.Errorf("%w: verifier key is not in canonical form %q", ErrInvalid, canon)
	}
	return name, pub, nil
}

// OpenNote checks a signed note (C2SP signed-note) and returns its text. At
// least one signature line must be by the key pub under name and every such
// line must verify; lines by other keys are ignored, as the format requires
// (they may be witnesses' cosignatures).
func OpenNote(msg []byte, name string, pub ed25519.PublicKey) ([]byte, error) {
	if len(pub) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("%w: public key is %d bytes, want %d", ErrInvalid, len(pub), ed25519.PublicKeySize)
	}
	if !utf8.Valid(msg) {
		return nil, fmt.Errorf("%w: signed note is not UTF-8", ErrInvalid)
	}
	for _, c := range msg {
		if c < 0x20 && c != '\n' {
			return nil, fmt.Errorf("%w: signed note holds control byte %#02x", ErrInvalid, c)
		}
	}
	split := bytes.LastIndex(msg, []byte("\n\n"))
	if split < 0 {
		return nil, fmt.Errorf("%w: signed note has no empty line before its signatures", ErrInvalid)
	}
	text, sigs := msg[:split+1], msg[split+2:]
	if len(sigs) == 0 || sigs[len(sigs)-1] != '\n' {
		return nil, fmt.Errorf("%w: signed note has no signature lines ending in a newline", ErrInvalid)
	}
	lines := bytes.Split(sigs[:len(sigs)-1], []byte("\n"))
	if len(lines) > maxNoteSignatures {
		return nil, fmt.Errorf("%w: signed note has %d signatures, at most %d", ErrInvalid, len(lines), maxNoteSignatures)
	}
	id := KeyID(name, pub)
	verified := 0
	for _, line := range lines {
		lineName, sig, err := parseSignatureLine(line)
		if err != nil {
			return nil, err
		}
		if lineName != name || binary.BigEndian.Uint32(sig) != id {
			continue
		}
		if len(sig) != 4+ed25519.SignatureSize || !ed25519.Verify(pub, text, sig[4:]) {
			return nil, fmt.Errorf("%w: signature by %s+%08x does not verify", ErrInvalid, name, id)
		}
		verified++
	}
	if verified == 0 {
		return nil, fmt.Errorf("%w: signed note carries no signature by %s+%08x", ErrInvalid, name, id)
	}
	return text, nil
}

// parseSignatureLine splits "— name base64(keyid || sig)" (without its
// newline) into the name and the decoded bytes, at least 5 of them.
func parseSignatureLine(line []byte) (string, []byte, error) {
	rest, ok := bytes.CutPrefix(line, []byte("— "))
	if !ok {
		return "", nil, fmt.Errorf("%w: signature line %q does not start with an em dash and a space", ErrInvalid, line)
	}
	name, b64, ok := bytes.Cut(rest, []byte(" "))
	if !ok || !validKeyName(string(name)) {
		return "", nil, fmt.Errorf("%w: signature line %q has no valid key name", ErrInvalid, line)
	}
	sig, err := base64.StdEncoding.Strict().DecodeString(string(b64))
	if err != nil || len(sig) < 5 {
		return "", nil, fmt.Errorf("%w: signature line %q has no base64 key id and signature", ErrInvalid, line)
	}
	return string(name), sig, nil
}

// OpenCheckpoint checks a signed checkpoint from the log named origin
// signed with pub and returns its head. The head's origin must be origin.
func OpenCheckpoint(msg []byte, origin string, pub ed25519.PublicKey) (Head, error) {
	text, err := OpenNote(msg, origin, pub)
	if err != nil {
		return Head{}, err
	}
	h, err := ParseHead(text)
	if err != nil {
		return Head{}, err
	}
	if h.Origin != origin {
		return Head{}, fmt.Errorf("%w: checkpoint is of log %q, not %q", ErrInvalid, h.Origin, origin)
	}
	return h, nil
}
