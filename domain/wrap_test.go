package domain_test

import (
	"errors"
	"testing"

	"github.com/arr-dev/arr/domain"
)

func TestWrap(t *testing.T) {
	cause := domain.NotFound("x_not_found", "no x")
	f := func(fail bool) (err error) {
		defer domain.Wrap(&err, "reading %s", "x")
		if fail {
			return cause
		}
		return nil
	}
	if err := f(false); err != nil {
		t.Fatalf("no error wrapped into %v", err)
	}
	err := f(true)
	var de *domain.Error
	if err.Error() != "reading x: x_not_found: no x" || !errors.As(err, &de) || !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("wrapped: %v", err)
	}
}
