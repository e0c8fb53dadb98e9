package kurrentdb_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/EventStore/EventStore-Client-Go/v4/esdb"
	"github.com/google/uuid"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/eventstore/kurrentdb"
)

func TestToRevision(t *testing.T) {
	tests := []struct {
		name     string
		expected eventstore.ExpectedVersion
		want     esdb.ExpectedRevision
	}{
		{"any", eventstore.Any(), esdb.Any{}},
		{"no stream", eventstore.NoStream(), esdb.NoStream{}},
		{"stream exists", eventstore.StreamExists(), esdb.StreamExists{}},
		{"exact zero", eventstore.Exact(0), esdb.Revision(0)},
		{"exact 42", eventstore.Exact(42), esdb.Revision(42)},
		{"after version -1 is no stream", eventstore.AfterVersion(-1), esdb.NoStream{}},
		{"after version 7 is exact 7", eventstore.AfterVersion(7), esdb.Revision(7)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := kurrentdb.ToRevision(tc.expected); got != tc.want {
				t.Fatalf("ToRevision(%s) = %#v, want %#v", tc.expected, got, tc.want)
			}
		})
	}
}

func TestIsSystem(t *testing.T) {
	tests := []struct {
		name      string
		stream    string
		eventType string
		want      bool
	}{
		{"user event", "account-1", "AccountCreated", false},
		{"stats stream", "$stats-127.0.0.1:2113", "$statsCollected", true},
		{"system type in user stream (link)", "account-1", "$>", true},
		{"metadata stream", "$$account-1", "$metadata", true},
		{"system stream with plain type", "$users", "UserCreated", true},
		{"dollar inside a name is fine", "acc$ount", "Type$1", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := kurrentdb.IsSystem(tc.stream, tc.eventType); got != tc.want {
				t.Fatalf("IsSystem(%q, %q) = %v, want %v", tc.stream, tc.eventType, got, tc.want)
			}
		})
	}
}

func TestCurrentRevision(t *testing.T) {
	const prefix = "[ErrorCodeWrongExpectedVersion] an append request failed the optimistic concurrency on the server: "
	tests := []struct {
		name       string
		msg        string
		wantV      uint64
		wantExists bool
		wantOK     bool
	}{
		{"exact revision", prefix + "wrong expected version: expecting '1' but got '2'", 2, true, true},
		{"no stream", prefix + "wrong expected version: expecting '0' but got 'no_stream'", 0, false, true},
		{"expected no stream, stream at 0", prefix + "wrong expected version: expecting 'no_stream' but got '0'", 0, true, true},
		{"wrapped by the store", "append to a: " + prefix + "wrong expected version: expecting 'stream_exists' but got 'no_stream'", 0, false, true},
		{"large revision", "expecting '1' but got '18446744073709551614'", math.MaxUint64 - 1, true, true},
		{"other message", "rpc error: code = Unavailable", 0, false, false},
		{"garbage revision", "expecting '1' but got 'x1'", 0, false, false},
		{"unterminated", "expecting '1' but got '12", 0, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, exists, ok := kurrentdb.CurrentRevision(tc.msg)
			if v != tc.wantV || exists != tc.wantExists || ok != tc.wantOK {
				t.Fatalf("CurrentRevision = %d, %v, %v; want %d, %v, %v", v, exists, ok, tc.wantV, tc.wantExists, tc.wantOK)
			}
		})
	}
}

func TestErrorTranslation(t *testing.T) {
	invalid := status.Error(codes.InvalidArgument, "Trying to read from an invalid position.")
	unavailable := status.Error(codes.Unavailable, "connection refused")
	tests := []struct {
		name            string
		err             error
		wantInvalidPos  bool
		wantUnavailable bool
	}{
		{"nil", nil, false, false},
		{"invalid position status", invalid, true, false},
		{"invalid position inside the client's error", wrapClient(invalid), true, false},
		{"invalid position by message only", errors.New("Trying to read from an invalid position."), true, false},
		{"unavailable status", unavailable, false, true},
		{"unavailable inside the client's error", wrapClient(unavailable), false, true},
		{"deadline status", status.Error(codes.DeadlineExceeded, "deadline"), false, true},
		{"not found is neither", wrapClient(status.Error(codes.NotFound, "stream")), false, false},
		{"plain error is neither", errors.New("boom"), false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := kurrentdb.IsInvalidPos(tc.err); got != tc.wantInvalidPos {
				t.Errorf("IsInvalidPos = %v, want %v", got, tc.wantInvalidPos)
			}
			got := kurrentdb.Translate(tc.err)
			if (got == nil) != (tc.err == nil) {
				t.Fatalf("Translate(%v) = %v", tc.err, got)
			}
			if errors.Is(got, domain.ErrUnavailable) != tc.wantUnavailable {
				t.Errorf("Translate(%v) = %v; unavailable = %v, want %v", tc.err, got, !tc.wantUnavailable, tc.wantUnavailable)
			}
			if tc.err != nil && !errors.Is(got, tc.err) {
				t.Errorf("Translate lost the cause: %v", got)
			}
		})
	}
}

// wrapClient wraps err the way the client does (an *esdb.Error around the
// gRPC error), then the way the store does.
func wrapClient(err error) error {
	e, _ := esdb.FromError(err)
	return fmt.Errorf("reading stream x: %w", e)
}

func TestMetadataRoundTrip(t *testing.T) {
	full := eventstore.Metadata{CorrelationID: "corr-1", CausationID: "cause-1", Actor: "account:42", RequestID: "req-1"}
	tests := []struct {
		name       string
		md         eventstore.Metadata
		schema     int
		wantSchema int
	}{
		{"full metadata", full, 3, 3},
		{"empty metadata", eventstore.Metadata{}, 1, 1},
		{"schema 0 is stored as 1", full, 0, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := kurrentdb.EncodeMetadata(tc.md, tc.schema)
			if err != nil {
				t.Fatalf("encode: %v", err)
			}
			var raw map[string]any
			if err := json.Unmarshal(b, &raw); err != nil || raw["schema_version"] != float64(tc.wantSchema) {
				t.Fatalf("stored metadata %s: schema_version missing or wrong (%v)", b, err)
			}
			md, schema, err := kurrentdb.DecodeMetadata(b)
			if err != nil || md != tc.md || schema != tc.wantSchema {
				t.Fatalf("decode = %+v, %d, %v; want %+v, %d", md, schema, err, tc.md, tc.wantSchema)
			}
		})
	}
	t.Run("metadata written by others", func(t *testing.T) {
		if md, schema, err := kurrentdb.DecodeMetadata(nil); err != nil || schema != 1 || md != (eventstore.Metadata{}) {
			t.Fatalf("empty metadata = %+v, %d, %v", md, schema, err)
		}
		if _, _, err := kurrentdb.DecodeMetadata([]byte("not json")); err == nil {
			t.Fatalf("non-JSON metadata decoded without error")
		}
	})
}

func TestConvert(t *testing.T) {
	id := uuid.New()
	md, _ := kurrentdb.EncodeMetadata(eventstore.Metadata{Actor: "a"}, 2)
	local := time.Date(2025, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600))
	base := esdb.RecordedEvent{EventID: id, EventType: "Tested", StreamID: "s-1", EventNumber: 4,
		Position: esdb.Position{Commit: 900, Prepare: 900}, CreatedDate: local, Data: []byte(`{"n":1}`), UserMetadata: md}
	tests := []struct {
		name    string
		edit    func(e *esdb.RecordedEvent)
		wantErr string
	}{
		{"event written by this store", func(*esdb.RecordedEvent) {}, ""},
		{"no position (server before 22.6)", func(e *esdb.RecordedEvent) {
			e.Position = esdb.Position{Commit: math.MaxUint64, Prepare: math.MaxUint64}
		}, "22.6"},
		{"broken metadata", func(e *esdb.RecordedEvent) { e.UserMetadata = []byte("{") }, "metadata"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := base
			tc.edit(&r)
			e, err := kurrentdb.Convert(&r)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one mentioning %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("convert: %v", err)
			}
			if e.ID != id || e.StreamID != "s-1" || e.Type != "Tested" || e.StreamVersion != 4 || e.Position != 900 ||
				e.SchemaVersion != 2 || e.Metadata.Actor != "a" || string(e.Data) != `{"n":1}` {
				t.Fatalf("event = %+v", e)
			}
			if e.RecordedAt.Location() != time.UTC || !e.RecordedAt.Equal(local) {
				t.Fatalf("recorded at %v, want %v in UTC", e.RecordedAt, local)
			}
		})
	}
}

func TestMatchIDs(t *testing.T) {
	a, b, c, x, y := uuid.New(), uuid.New(), uuid.New(), uuid.New(), uuid.New()
	ids := []uuid.UUID{a, b, c}
	tests := []struct {
		name      string
		stored    []uuid.UUID
		wantFirst int
		wantMatch int
	}{
		{"empty stream", nil, 0, kurrentdb.IDsAbsent},
		{"other events only", []uuid.UUID{x, y}, 0, kurrentdb.IDsAbsent},
		{"exactly the append", []uuid.UUID{a, b, c}, 0, kurrentdb.IDsPresent},
		{"in the middle of the stream", []uuid.UUID{x, a, b, c, y}, 1, kurrentdb.IDsPresent},
		{"at the end of the stream", []uuid.UUID{x, y, a, b, c}, 2, kurrentdb.IDsPresent},
		{"only some of them", []uuid.UUID{x, a, b}, 1, kurrentdb.IDsPartial},
		{"interleaved with another event", []uuid.UUID{a, x, b, c}, 0, kurrentdb.IDsPartial},
		{"out of order", []uuid.UUID{b, a, c}, 0, kurrentdb.IDsPartial},
		{"one id reused elsewhere", []uuid.UUID{x, c, y}, 1, kurrentdb.IDsPartial},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			first, m := kurrentdb.MatchIDs(tc.stored, ids)
			if int(m) != tc.wantMatch || (tc.wantMatch != kurrentdb.IDsAbsent && first != tc.wantFirst) {
				t.Fatalf("MatchIDs = %d, %d; want %d, %d", first, m, tc.wantFirst, tc.wantMatch)
			}
		})
	}
}

func TestValidateAppend(t *testing.T) {
	ok := eventstore.NewEvent{ID: uuid.New(), Type: "Tested", Data: json.RawMessage(`{}`)}
	tests := []struct {
		name    string
		a       eventstore.Append
		wantErr string
	}{
		{"valid", eventstore.Append{StreamID: "s-1", Events: []eventstore.NewEvent{ok}}, ""},
		{"empty data is allowed", eventstore.Append{StreamID: "s-1", Events: []eventstore.NewEvent{{ID: uuid.New(), Type: "T"}}}, ""},
		{"empty stream id", eventstore.Append{Events: []eventstore.NewEvent{ok}}, "empty stream id"},
		{"system stream", eventstore.Append{StreamID: "$users", Events: []eventstore.NewEvent{ok}}, "belong to KurrentDB"},
		{"long stream id", eventstore.Append{StreamID: strings.Repeat("s", 513), Events: []eventstore.NewEvent{ok}}, "512"},
		{"no events", eventstore.Append{StreamID: "s-1"}, "no events"},
		{"nil id", eventstore.Append{StreamID: "s-1", Events: []eventstore.NewEvent{{Type: "T"}}}, "no id"},
		{"id twice", eventstore.Append{StreamID: "s-1", Events: []eventstore.NewEvent{ok, ok}}, "appears twice"},
		{"no type", eventstore.Append{StreamID: "s-1", Events: []eventstore.NewEvent{{ID: uuid.New()}}}, "no type"},
		{"system type", eventstore.Append{StreamID: "s-1", Events: []eventstore.NewEvent{{ID: uuid.New(), Type: "$>"}}}, "belong to KurrentDB"},
		{"data not JSON", eventstore.Append{StreamID: "s-1", Events: []eventstore.NewEvent{{ID: uuid.New(), Type: "T", Data: json.RawMessage("{")}}}, "not valid JSON"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := kurrentdb.Validate(tc.a)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("Validate = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func TestConfig(t *testing.T) {
	tests := []struct {
		name    string
		cfg     kurrentdb.Config
		wantErr string
	}{
		{"url only", kurrentdb.Config{URL: "esdb://127.0.0.1:2113?tls=false"}, ""},
		{"missing url", kurrentdb.Config{}, "URL is required"},
		{"not a connection string", kurrentdb.Config{URL: "http://127.0.0.1:2113"}, "URL"},
		{"negative timeout", kurrentdb.Config{URL: "esdb://127.0.0.1:2113?tls=false", CallTimeout: -time.Second}, "CallTimeout"},
		{"negative window", kurrentdb.Config{URL: "esdb://127.0.0.1:2113?tls=false", DuplicateWindow: -1}, "DuplicateWindow"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := kurrentdb.New(tc.cfg)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				if err := s.Close(); err != nil {
					t.Fatalf("Close: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("New = %v, want an error mentioning %q", err, tc.wantErr)
			}
		})
	}
}

// A closed store refuses work at once, without reaching for a server.
func TestClosedStore(t *testing.T) {
	s, err := kurrentdb.New(kurrentdb.Config{URL: "esdb://127.0.0.1:1?tls=false"})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ev := eventstore.NewEvent{ID: uuid.New(), Type: "T"}
	calls := []struct {
		name string
		call func() error
	}{
		{"append", func() error { _, err := s.Append(ctx, "s-1", eventstore.Any(), ev); return err }},
		{"bulk", func() error {
			_, err := s.AppendBulk(ctx, []eventstore.Append{{StreamID: "s-1", Expected: eventstore.Any(), Events: []eventstore.NewEvent{ev}}})
			return err
		}},
		{"read stream", func() error { _, err := s.ReadStream(ctx, "s-1", eventstore.ReadStreamOptions{}); return err }},
		{"read all", func() error { _, err := s.ReadAll(ctx, 0, 10); return err }},
		{"head", func() error { _, err := s.Head(ctx); return err }},
		{"wait", func() error { return s.WaitForEvents(ctx, 0) }},
		{"subscribe", func() error {
			return s.Subscribe(ctx, 0, func(context.Context, []eventstore.Event) error { return nil })
		}},
	}
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			err := c.call()
			if c.name == "subscribe" {
				// CatchUp reports a failed read as the subscription's error.
				if err == nil {
					t.Fatalf("subscribe on a closed store returned nil")
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "closed") {
				t.Fatalf("%s on a closed store = %v, want a closed error", c.name, err)
			}
		})
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}
