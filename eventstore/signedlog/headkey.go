package signedlog

import (
	"crypto/ed25519"
	"errors"

	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/eventstore/transparency"
	"github.com/arr-dev/arr/eventstore/transparency/verifier"
)

// HeadKey is what a kept head's signature says about its key, checked
// against the log's key.
type HeadKey struct {
	// Log is true when the head verifies under the log's key.
	Log bool
	// Fingerprint is the fingerprint (transparency.KeyFingerprint) of the
	// key kept with the head, its verifier key; "" when that cannot be
	// read.
	Fingerprint string
	// Signed is true when the head verifies under the key kept with it:
	// with Log false, a head genuinely signed by another key; with both
	// false, a forged or damaged head.
	Signed bool
	// Err is why the head does not verify under the log's key (nil when
	// it does).
	Err error
}

// CheckHeadKey checks a kept head's signature under the log's key (origin,
// logKey) and, if it does not verify, under the key kept with it. It
// returns the head as its checkpoint signs it when the log's key signed
// it.
func CheckHeadKey(h eventstore.SignedHead, origin string, logKey ed25519.PublicKey) (verifier.Head, HeadKey) {
	opened, err := verifier.OpenCheckpoint(h.Checkpoint, origin, logKey)
	if err == nil && opened == h.Head {
		return opened, HeadKey{Log: true, Fingerprint: transparency.KeyFingerprint(logKey), Signed: true}
	}
	if err == nil {
		err = errors.New("its checkpoint does not say what the head's columns say")
	}
	hk := HeadKey{Err: err}
	name, pub, perr := verifier.ParseVerifierKey(h.VerifierKey)
	if perr != nil {
		return verifier.Head{}, hk
	}
	hk.Fingerprint = transparency.KeyFingerprint(pub)
	if o, err := verifier.OpenCheckpoint(h.Checkpoint, name, pub); err == nil && o == h.Head {
		hk.Signed = true
	}
	return verifier.Head{}, hk
}
