package upstream

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

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
	peeked  []byte
	peekErr error
	hasPeek bool
	// span is the call's span (trace.go), ended by Close; nil: none.
	span trace.Span
}

// Peek reads the first event ahead, so a caller can fail over to another
// upstream when a stream breaks before it delivered anything. Its error is
// that of Next; io.EOF (an empty stream) is not an error here.
func (s *Stream) Peek() error {
	data, err := s.Next()
	s.peeked, s.peekErr, s.hasPeek = append([]byte(nil), data...), err, true
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

func newStream(body io.ReadCloser, touch, release func()) *Stream {
	return &Stream{body: body, r: bufio.NewReaderSize(body, 64<<10), touch: touch, release: release}
}

// ErrCut is returned when a stream ends (or stalls past the idle timeout)
// before its "data: [DONE]".
var ErrCut = errors.New("upstream stream ended before [DONE]")

// Next returns the data of the next event ("[DONE]" excluded): io.EOF
// after [DONE], ErrCut (wrapped) when the stream breaks off first. The
// returned slice is valid until the next call.
func (s *Stream) Next() ([]byte, error) {
	if s.hasPeek {
		s.hasPeek = false
		return s.peeked, s.peekErr
	}
	if s.done {
		return nil, io.EOF
	}
	var data []byte // nil until a data line, then s.buf
	for {
		line, err := s.r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A long event: gather it.
			full := append([]byte(nil), line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = s.r.ReadSlice('\n')
				full = append(full, line...)
			}
			line = full
		}
		if err != nil {
			s.cutSpan()
			return nil, fmt.Errorf("%w: %v", ErrCut, err)
		}
		s.touch()
		line = bytes.TrimRight(line, "\r\n")
		switch {
		case len(line) == 0:
			if data == nil {
				continue
			}
			if bytes.Equal(data, []byte("[DONE]")) {
				s.done = true
				return nil, io.EOF
			}
			return data, nil
		case bytes.HasPrefix(line, []byte("data:")):
			d := bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" "))
			if data == nil {
				s.buf = append(s.buf[:0], d...)
			} else {
				s.buf = append(append(s.buf, '\n'), d...)
			}
			data = s.buf
		case bytes.HasPrefix(line, []byte("event:")):
			if ev := bytes.TrimSpace(line[6:]); bytes.Equal(ev, []byte("error")) {
				s.cutSpan()
				return nil, fmt.Errorf("%w: the upstream sent an error event", ErrCut)
			}
		}
	}
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

// cutSpan marks the call's span failed: the stream broke off.
func (s *Stream) cutSpan() {
	if s.span != nil {
		s.span.SetAttributes(semconv.ErrorTypeKey.String("stream_cut"))
		s.span.SetStatus(codes.Error, "stream_cut")
	}
}
