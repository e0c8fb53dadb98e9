package eventstore

import (
	"fmt"

	"github.com/arr-dev/arr/domain"
)

type expectKind uint8

const (
	expectAny expectKind = iota
	expectNoStream
	expectExists
	expectExact
)

// ExpectedVersion is what an append asserts about its stream.
type ExpectedVersion struct {
	kind    expectKind
	version uint64
}

// Any appends whatever the stream holds.
func Any() ExpectedVersion { return ExpectedVersion{kind: expectAny} }

// NoStream appends only if the stream has no events.
func NoStream() ExpectedVersion { return ExpectedVersion{kind: expectNoStream} }

// StreamExists appends only if the stream has at least one event.
func StreamExists() ExpectedVersion { return ExpectedVersion{kind: expectExists} }

// Exact appends only if the stream's last event has version v.
func Exact(v uint64) ExpectedVersion { return ExpectedVersion{kind: expectExact, version: v} }

// AfterVersion is Exact(v) for v >= 0 and NoStream for -1: the expectation
// for an aggregate loaded at version v.
func AfterVersion(v int64) ExpectedVersion {
	if v < 0 {
		return NoStream()
	}
	return Exact(uint64(v))
}

// Check tests the expectation against the stream's current last version
// (exists=false for an empty stream).
func (ev ExpectedVersion) Check(current uint64, exists bool) bool {
	switch ev.kind {
	case expectNoStream:
		return !exists
	case expectExists:
		return exists
	case expectExact:
		return exists && current == ev.version
	}
	return true
}

// IsAny reports whether this is Any().
func (ev ExpectedVersion) IsAny() bool { return ev.kind == expectAny }

// Exact returns the exact version asserted, if any.
func (ev ExpectedVersion) ExactVersion() (uint64, bool) { return ev.version, ev.kind == expectExact }

// IsNoStream reports whether this is NoStream().
func (ev ExpectedVersion) IsNoStream() bool { return ev.kind == expectNoStream }

// IsStreamExists reports whether this is StreamExists().
func (ev ExpectedVersion) IsStreamExists() bool { return ev.kind == expectExists }

func (ev ExpectedVersion) String() string {
	switch ev.kind {
	case expectNoStream:
		return "no stream"
	case expectExists:
		return "stream exists"
	case expectExact:
		return fmt.Sprintf("version %d", ev.version)
	}
	return "any"
}

// WrongExpectedVersionError is returned when an append's expectation fails.
// errors.Is(err, domain.ErrConcurrency) holds for it.
type WrongExpectedVersionError struct {
	StreamID string
	Expected ExpectedVersion
	// Actual is the stream's last version; ActualExists is false for an empty
	// stream.
	Actual       uint64
	ActualExists bool
}

func (e *WrongExpectedVersionError) Error() string {
	actual := "no stream"
	if e.ActualExists {
		actual = fmt.Sprintf("version %d", e.Actual)
	}
	return fmt.Sprintf("append to %s: expected %s, stream is at %s", e.StreamID, e.Expected, actual)
}

// Unwrap makes errors.Is(err, domain.ErrConcurrency) true.
func (e *WrongExpectedVersionError) Unwrap() error { return domain.ErrConcurrency }
