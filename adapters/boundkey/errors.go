package boundkey

import "errors"

// ErrRefused is what every refusal of Bind wraps: the process was given
// another key than the database's, none where the database names one, a
// key it cannot read, or one the database's data was not made with. The
// operator must change the configuration; nothing was made or recorded.
var ErrRefused = errors.New("key refused")

// RefusedError is a refusal: Message says what was found, where, and how
// to fix it, and never contains a key.
type RefusedError struct {
	Purpose Purpose
	Message string
}

func (e *RefusedError) Error() string { return e.Message }

// Unwrap returns ErrRefused.
func (e *RefusedError) Unwrap() error { return ErrRefused }
