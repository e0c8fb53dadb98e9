package verifier

import "errors"

// ErrInvalid is what every failed check wraps: a proof that does not prove,
// a malformed hash, head, note or key, a signature that does not verify.
// The wrapped message says which check failed.
var ErrInvalid = errors.New("transparency: verification failed")
