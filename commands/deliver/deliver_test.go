package deliver

import (
	"testing"
	"time"
)

func TestShouldDisable(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name       string
		since, now time.Time
		want       bool
	}{
		{"not failing", time.Time{}, t0, false},
		{"failing a moment", t0, t0.Add(time.Minute), false},
		{"a second short of three days", t0, t0.Add(72*time.Hour - time.Second), false},
		{"three days", t0, t0.Add(72 * time.Hour), true},
		{"four days", t0, t0.Add(96 * time.Hour), true},
	} {
		if got := ShouldDisable(c.since, c.now, DefaultDisableAfter); got != c.want {
			t.Errorf("%s: ShouldDisable = %v, want %v", c.name, got, c.want)
		}
	}
}
