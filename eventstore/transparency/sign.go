package transparency

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/binary"
	"fmt"

	"github.com/arr-dev/arr/eventstore/transparency/verifier"
)

// Sign signs a head's note text with the log's key and returns the raw
// 64-byte Ed25519 signature verifier.VerifyHead checks. It fails only for a
// head that has no text (an invalid origin or a negative timestamp).
func Sign(priv ed25519.PrivateKey, head verifier.Head) ([]byte, error) {
	if len(priv) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("signing a tree head: private key is %d bytes, want %d", len(priv), ed25519.PrivateKeySize)
	}
	text, err := head.Text()
	if err != nil {
		return nil, fmt.Errorf("signing a tree head: %w", err)
	}
	return ed25519.Sign(priv, text), nil
}

// SignCheckpoint signs a head and returns it as a signed checkpoint: the
// note text, an empty line and one signature line under the head's origin,
// which verifier.OpenCheckpoint reads.
func SignCheckpoint(priv ed25519.PrivateKey, head verifier.Head) ([]byte, error) {
	sig, err := Sign(priv, head)
	if err != nil {
		return nil, err
	}
	text, err := head.Text()
	if err != nil {
		return nil, fmt.Errorf("signing a tree head: %w", err)
	}
	pub := priv.Public().(ed25519.PublicKey)
	keyed := binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(sig)), verifier.KeyID(head.Origin, pub))
	keyed = append(keyed, sig...)
	out := append(text, '\n')
	out = append(out, "— "...)
	out = append(out, head.Origin...)
	out = append(out, ' ')
	out = base64.StdEncoding.AppendEncode(out, keyed)
	return append(out, '\n'), nil
}
