package upstream

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"

	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
)

// Stream reads an upstream's server-sent events. Not safe for concurrent
// use.
type Stream struct {
	body    io.ReadCloser
	r       *bufio.Reader
	touch   func()
	release func()
	done    bool
	buf     []byte
	peeked  Event
	peekErr error
	hasPeek bool
	// anth: Anthropic's events (anthropic.go): named, kept raw, ended by
	// message_stop, their usage counted.
	anth *anthropicState
	// gem: Gemini's events (gemini.go): ended by the body's end after a
	// finishing event, failed by an error object.
	gem *geminiState
	// frames: a Bedrock stream's event-stream frames (bedrock.go), read
	// as chat chunks.
	frames *bedrockFrames
	name   []byte
	raw    []byte
	// maxEvent bounds one event's bytes (its lines, its joined data):
	// a longer one ends the stream with ErrTooLarge, so an upstream's
	// endless line takes no more memory than that.
	maxEvent int
	// span is the call's span (trace.go), ended by Close; nil: none.
	span trace.Span
}

// Peek reads the first event ahead, so a caller can fail over to another
// upstream when a stream breaks before it delivered anything. Its error is
// that of Next; io.EOF (an empty stream) is not an error here.
func (s *Stream) Peek() error {
	// Nothing is read until the next call returns the peeked event, so
	// its slices stay valid without a copy.
	ev, err := s.NextEvent()
	s.peeked, s.peekErr, s.hasPeek = ev, err, true
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// newStream reads body's events, at most maxEvent bytes each and total
// bytes in all (past either: ErrTooLarge, and the stream is cut).
func newStream(body io.ReadCloser, maxEvent, total int64, touch, release func()) *Stream {
	return &Stream{body: body, r: bufio.NewReaderSize(&capped{r: body, left: total}, 64<<10), maxEvent: int(maxEvent), touch: touch, release: release}
}

// ErrCut is returned when a stream ends (or stalls past the idle timeout)
// before its "data: [DONE]" (an Anthropic stream: before message_stop; a
// Gemini stream: before an event with a finishReason).
var ErrCut = errors.New("upstream stream ended before [DONE]")

// Next returns the data of the next event ("[DONE]" excluded): io.EOF
// after [DONE], ErrCut (wrapped) when the stream breaks off first. The
// returned slice is valid until the next call. For an Anthropic stream it
// is NextEvent's Data.
func (s *Stream) Next() ([]byte, error) {
	ev, err := s.NextEvent()
	return ev.Data, err
}

// Event is one server-sent event.
type Event struct {
	// Name is its "event:" field ("" when it has none, as OpenAI's).
	Name string
	// Data is its data lines, joined by "\n".
	Data []byte
	// Raw is the event as it came, through its blank line; for Anthropic
	// streams only (nil for others).
	Raw []byte
}

// NextEvent returns the next event, its slices valid until the next call.
// An OpenAI stream ends with io.EOF after "data: [DONE]" (not returned);
// an Anthropic stream returns its message_stop event, then io.EOF; a
// Gemini stream ends with io.EOF at the body's end after an event with a
// finishReason or a blocked prompt (a "data: [DONE]" is no end of it). A
// stream that breaks off before its end returns ErrCut (wrapped), as does
// an error event (for Anthropic's an *EventError too, with the body).
func (s *Stream) NextEvent() (Event, error) {
	if s.hasPeek {
		s.hasPeek = false
		return s.peeked, s.peekErr
	}
	if s.frames != nil {
		ev, err := s.frames.next()
		if err != nil && !errors.Is(err, io.EOF) {
			s.cutSpan()
		}
		return ev, err
	}
	if s.anth != nil && s.anth.err != nil {
		return Event{}, s.anth.err
	}
	if s.gem != nil && s.gem.err != nil {
		return Event{}, s.gem.err
	}
	if s.done {
		return Event{}, io.EOF
	}
	ev, err := s.read()
	if err == nil && s.anth != nil {
		err = s.anthropicEvent(ev)
	}
	if err == nil && s.gem != nil {
		err = s.geminiEvent(ev)
	}
	if err != nil && !errors.Is(err, io.EOF) {
		s.cutSpan()
		if s.anth != nil {
			s.anth.err = err
		}
		if s.gem != nil {
			s.gem.err = err
		}
	}
	return ev, err
}

// read reads the next event.
func (s *Stream) read() (Event, error) {
	var data []byte // nil until a data line, then s.buf or (Anthropic's first data line) a slice of s.raw
	inBuf := false  // data is s.buf
	s.name, s.raw = s.name[:0], s.raw[:0]
	for {
		line, err := s.r.ReadSlice('\n')
		if s.anth != nil || errors.Is(err, bufio.ErrBufferFull) {
			// An Anthropic stream's line is kept in raw, the event as it
			// came, and read from there (a data line's data is then a
			// slice of raw, not a copy); a long line of another stream
			// is gathered alone.
			start, kept := len(s.raw), s.raw
			if s.anth == nil {
				start, kept = 0, nil
			}
			kept = appendDoubling(kept, line)
			for errors.Is(err, bufio.ErrBufferFull) && len(kept)-start <= s.maxEvent {
				line, err = s.r.ReadSlice('\n')
				kept = appendDoubling(kept, line)
			}
			if len(kept)-start > s.maxEvent {
				err = ErrTooLarge
			}
			if s.anth != nil {
				s.raw = kept
			}
			line = kept[start:]
		}
		if err != nil {
			if s.gem != nil && s.gem.finished && data == nil && len(line) == 0 && errors.Is(err, io.EOF) {
				// A Gemini stream ends with its body, after the event
				// that finished it.
				s.done = true
				return Event{}, io.EOF
			}
			return Event{}, s.cut(err)
		}
		s.touch()
		line = bytes.TrimRight(line, "\r\n")
		switch {
		case len(line) == 0:
			if data == nil {
				s.name, s.raw = s.name[:0], s.raw[:0]
				continue
			}
			// Only an OpenAI stream ends with [DONE]; a Gemini stream
			// ends with its body after a finishing event, and a [DONE]
			// there is an event that is not JSON (ErrCut, geminiEvent).
			if s.anth == nil && s.gem == nil && bytes.Equal(data, []byte("[DONE]")) {
				s.done = true
				return Event{}, io.EOF
			}
			ev := Event{Name: string(s.name), Data: data}
			if s.anth != nil {
				ev.Raw = s.raw
			}
			return ev, nil
		case bytes.HasPrefix(line, []byte("data:")):
			d := bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" "))
			switch {
			case data == nil && s.anth != nil:
				data, inBuf = d[:len(d):len(d)], false // in raw
			case data == nil:
				s.buf = append(s.buf[:0], d...)
				data, inBuf = s.buf, true
			default:
				if !inBuf {
					s.buf = append(s.buf[:0], data...)
				}
				s.buf = append(append(s.buf, '\n'), d...)
				data, inBuf = s.buf, true
			}
			if len(data) > s.maxEvent || len(s.raw) > s.maxEvent {
				return Event{}, s.cut(ErrTooLarge)
			}
		case bytes.HasPrefix(line, []byte("event:")):
			ev := bytes.TrimSpace(line[6:])
			if s.anth == nil && bytes.Equal(ev, []byte("error")) {
				return Event{}, fmt.Errorf("%w: the upstream sent an error event", ErrCut)
			}
			s.name = append(s.name[:0], ev...)
		}
	}
}

// appendDoubling is append(dst, src...) growing dst to twice its size
// when it is full: a long line gathered 64 KiB at a time then allocates
// about twice its size in all, not the five times append's 1.25x growth
// of large slices comes to.
func appendDoubling(dst, src []byte) []byte {
	if len(dst)+len(src) > cap(dst) {
		dst = slices.Grow(dst, max(len(dst), len(src)))
	}
	return append(dst, src...)
}

// cut is the error of a stream whose reading failed with err before its
// end.
func (s *Stream) cut(err error) error {
	if errors.Is(err, ErrTooLarge) {
		return fmt.Errorf("%w: %w", ErrCut, ErrTooLarge)
	}
	if s.anth != nil {
		return fmt.Errorf("%w (no message_stop): %v", ErrCut, err)
	}
	return fmt.Errorf("%w: %v", ErrCut, err)
}

// Close releases the stream.
func (s *Stream) Close() error {
	err := s.body.Close()
	s.release()
	if s.span != nil {
		s.span.End()
	}
	return err
}

// Abort closes the stream's body, failing a read in progress (Close
// still releases the stream). Safe to call from another goroutine.
func (s *Stream) Abort() { _ = s.body.Close() }

// cutSpan marks the call's span failed: the stream broke off.
func (s *Stream) cutSpan() {
	if s.span != nil {
		s.span.SetAttributes(semconv.ErrorTypeKey.String("stream_cut"))
		s.span.SetStatus(codes.Error, "stream_cut")
	}
}
