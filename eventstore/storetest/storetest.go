package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/eventstore"
)

// Factory returns a store for one test; the test closes it.
type Factory func(t testing.TB) eventstore.Store

// Capabilities are the parts of the contract a store may not offer; the
// suite checks the weaker promise instead.
type Capabilities struct {
	// GlobalEventIDs: an event id is unique in the whole log (PostgreSQL),
	// not only within its stream (KurrentDB has no lookup by id across
	// streams).
	GlobalEventIDs bool
	// TypedReads: the store is an eventstore.TypeReader (PostgreSQL); the
	// suite then checks ReadAllOfTypes too.
	TypedReads bool
	// MerkleTree: the store is an eventstore.MerkleLog (PostgreSQL): every
	// event a leaf of an RFC 6962 tree extended at commit. The suite then
	// checks the tree against the events; without it, it checks that the
	// store does not claim to be one (KurrentDB cannot: its server assigns
	// positions after the write, outside any transaction of arr's).
	MerkleTree bool
}

type contractTest struct {
	name string
	fn   func(t *testing.T, s eventstore.Store)
}

// Run runs the whole contract against stores from f.
func Run(t *testing.T, f Factory, caps Capabilities) {
	testReusedID := func(t *testing.T, s eventstore.Store) { testReusedID(t, s, caps) }
	tests := []contractTest{
		{"append and read forward", testAppendRead},
		{"expected version no stream", testNoStream},
		{"expected version exact conflict is typed", testExactConflict},
		{"expected version stream exists", testStreamExists},
		{"expected version any", testAny},
		{"idempotent retry writes nothing", testIdempotent},
		{"reused event id in another append is refused", testReusedID},
		{"read backward", testReadBackward},
		{"read all in position order", testReadAll},
		{"metadata round trip", testMetadata},
		{"an event PostgreSQL could not store is refused", testUnstorable},
		{"concurrent appends to one stream: one winner per version", testConcurrentSameStream},
		{"concurrent appends to different streams all succeed", testConcurrentStreams},
		{"bulk append all or nothing", testBulk},
		{"bulk append retry is idempotent", testBulkRetry},
		{"bulk append keeps every field", testBulkRoundTrip},
		{"subscribe catches up then follows", testSubscribe},
		{"wait for events wakes on append", testWait},
	}
	if caps.TypedReads {
		tests = append(tests, contractTest{"read all of some types (TypeReader)", testReadAllOfTypes})
	}
	if caps.MerkleTree {
		tests = append(tests, merkleTests...)
	} else {
		tests = append(tests, contractTest{"no Merkle tree is claimed", testNoMerkleTree})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := f(t)
			t.Cleanup(func() { _ = s.Close() })
			tc.fn(t, s)
		})
	}
}

func stream(t testing.TB, kind string) string {
	t.Helper()
	return fmt.Sprintf("%s-%s", kind, uuid.NewString())
}

func ev(t testing.TB, typ string, n int) eventstore.NewEvent {
	t.Helper()
	data, _ := json.Marshal(map[string]any{"n": n, "s": fmt.Sprintf("value %d", n)})
	return eventstore.NewEvent{ID: uuid.New(), Type: typ, SchemaVersion: 1, Data: data}
}

func evs(t testing.TB, n int) []eventstore.NewEvent {
	out := make([]eventstore.NewEvent, n)
	for i := range out {
		out[i] = ev(t, "Tested", i)
	}
	return out
}

func ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}

func mustAppend(t testing.TB, s eventstore.Store, id string, exp eventstore.ExpectedVersion, es ...eventstore.NewEvent) eventstore.AppendResult {
	t.Helper()
	r, err := s.Append(ctx(t), id, exp, es...)
	if err != nil {
		t.Fatalf("append to %s (%s): %v", id, exp, err)
	}
	return r
}

func readStream(t testing.TB, s eventstore.Store, id string) []eventstore.Event {
	t.Helper()
	out, err := s.ReadStream(ctx(t), id, eventstore.ReadStreamOptions{Limit: 10000})
	if err != nil {
		t.Fatalf("read %s: %v", id, err)
	}
	return out
}

func testAppendRead(t *testing.T, s eventstore.Store) {
	id := stream(t, "ar")
	in := evs(t, 3)
	r := mustAppend(t, s, id, eventstore.NoStream(), in...)
	if r.FirstVersion != 0 || r.LastVersion != 2 || r.Duplicate {
		t.Fatalf("result = %+v, want versions 0..2, not duplicate", r)
	}
	if r.LastPosition <= r.FirstPosition && len(in) > 1 {
		t.Fatalf("positions not increasing: %+v", r)
	}
	got := readStream(t, s, id)
	if len(got) != 3 {
		t.Fatalf("read %d events, want 3", len(got))
	}
	for i, e := range got {
		if e.ID != in[i].ID || e.Type != "Tested" || e.StreamID != id || e.StreamVersion != uint64(i) || e.SchemaVersion != 1 {
			t.Errorf("event %d = %+v", i, e)
		}
		var a, b map[string]any
		_ = json.Unmarshal(e.Data, &a)
		_ = json.Unmarshal(in[i].Data, &b)
		if fmt.Sprint(a) != fmt.Sprint(b) {
			t.Errorf("event %d data = %s, want %s", i, e.Data, in[i].Data)
		}
		if e.RecordedAt.IsZero() || time.Since(e.RecordedAt) > time.Hour || e.RecordedAt.Location() != time.UTC {
			t.Errorf("event %d recorded at %v", i, e.RecordedAt)
		}
	}
	if got[0].Position != r.FirstPosition || got[2].Position != r.LastPosition {
		t.Errorf("positions read %d..%d, append said %d..%d", got[0].Position, got[2].Position, r.FirstPosition, r.LastPosition)
	}
	from1, err := s.ReadStream(ctx(t), id, eventstore.ReadStreamOptions{From: 1, Limit: 1})
	if err != nil || len(from1) != 1 || from1[0].StreamVersion != 1 {
		t.Fatalf("read from 1 limit 1 = %+v, %v", from1, err)
	}
	none, err := s.ReadStream(ctx(t), stream(t, "missing"), eventstore.ReadStreamOptions{})
	if err != nil || len(none) != 0 {
		t.Fatalf("reading a missing stream = %v, %v; want empty, nil", none, err)
	}
}

func wantConcurrency(t testing.TB, err error) *eventstore.WrongExpectedVersionError {
	t.Helper()
	if !errors.Is(err, domain.ErrConcurrency) {
		t.Fatalf("err = %v, want domain.ErrConcurrency", err)
	}
	var w *eventstore.WrongExpectedVersionError
	if !errors.As(err, &w) {
		t.Fatalf("err = %T %v, want *eventstore.WrongExpectedVersionError", err, err)
	}
	return w
}

func testNoStream(t *testing.T, s eventstore.Store) {
	id := stream(t, "ns")
	mustAppend(t, s, id, eventstore.NoStream(), ev(t, "A", 0))
	_, err := s.Append(ctx(t), id, eventstore.NoStream(), ev(t, "A", 1))
	w := wantConcurrency(t, err)
	if w.StreamID != id || !w.ActualExists || w.Actual != 0 {
		t.Errorf("error = %+v", w)
	}
}

func testExactConflict(t *testing.T, s eventstore.Store) {
	id := stream(t, "ex")
	mustAppend(t, s, id, eventstore.NoStream(), evs(t, 2)...)
	mustAppend(t, s, id, eventstore.Exact(1), ev(t, "A", 2))
	_, err := s.Append(ctx(t), id, eventstore.Exact(1), ev(t, "A", 3))
	w := wantConcurrency(t, err)
	if w.Actual != 2 || !w.ActualExists {
		t.Errorf("error = %+v, want actual 2", w)
	}
	_, err = s.Append(ctx(t), stream(t, "ex-missing"), eventstore.Exact(0), ev(t, "A", 0))
	if w := wantConcurrency(t, err); w.ActualExists {
		t.Errorf("missing stream reported as existing: %+v", w)
	}
	if n := len(readStream(t, s, id)); n != 3 {
		t.Fatalf("stream has %d events after a failed append, want 3", n)
	}
}

func testStreamExists(t *testing.T, s eventstore.Store) {
	id := stream(t, "se")
	_, err := s.Append(ctx(t), id, eventstore.StreamExists(), ev(t, "A", 0))
	wantConcurrency(t, err)
	mustAppend(t, s, id, eventstore.Any(), ev(t, "A", 0))
	mustAppend(t, s, id, eventstore.StreamExists(), ev(t, "A", 1))
}

func testAny(t *testing.T, s eventstore.Store) {
	id := stream(t, "any")
	for i := 0; i < 3; i++ {
		r := mustAppend(t, s, id, eventstore.Any(), ev(t, "A", i))
		if r.LastVersion != uint64(i) {
			t.Fatalf("append %d landed at version %d", i, r.LastVersion)
		}
	}
}

func testIdempotent(t *testing.T, s eventstore.Store) {
	id := stream(t, "idem")
	in := evs(t, 3)
	first := mustAppend(t, s, id, eventstore.NoStream(), in...)
	// A retry with the same ids (even with an expectation that would now
	// fail) returns the first result and writes nothing.
	again, err := s.Append(ctx(t), id, eventstore.NoStream(), in...)
	if err != nil {
		t.Fatalf("retry: %v", err)
	}
	if !again.Duplicate || again.FirstPosition != first.FirstPosition || again.LastPosition != first.LastPosition || again.LastVersion != first.LastVersion {
		t.Fatalf("retry = %+v, first = %+v", again, first)
	}
	if n := len(readStream(t, s, id)); n != 3 {
		t.Fatalf("stream has %d events after retry, want 3", n)
	}
	// The stream moves on normally after a retry.
	r := mustAppend(t, s, id, eventstore.Exact(2), ev(t, "A", 9))
	if r.FirstVersion != 3 {
		t.Fatalf("next append at version %d, want 3", r.FirstVersion)
	}
}

func testReusedID(t *testing.T, s eventstore.Store, caps Capabilities) {
	a, b := stream(t, "ra"), stream(t, "rb")
	e := ev(t, "A", 0)
	mustAppend(t, s, a, eventstore.NoStream(), e)
	// Within one stream every store refuses an id that is already there
	// alongside a new event.
	if _, err := s.Append(ctx(t), a, eventstore.Any(), e, ev(t, "A", 1)); err == nil {
		t.Fatalf("re-appending a used event id with a new one to the same stream succeeded")
	}
	if n := len(readStream(t, s, a)); n != 1 {
		t.Fatalf("stream a has %d events, want 1", n)
	}
	if !caps.GlobalEventIDs {
		return
	}
	_, err := s.Append(ctx(t), b, eventstore.NoStream(), e, ev(t, "A", 1))
	if err == nil {
		t.Fatalf("appending a used event id with a new one to another stream succeeded")
	}
	if n := len(readStream(t, s, b)); n != 0 {
		t.Fatalf("stream b has %d events, want 0", n)
	}
}

func testReadBackward(t *testing.T, s eventstore.Store) {
	id := stream(t, "bw")
	mustAppend(t, s, id, eventstore.NoStream(), evs(t, 5)...)
	got, err := s.ReadStream(ctx(t), id, eventstore.ReadStreamOptions{Backward: true, FromEnd: true, Limit: 2})
	if err != nil || len(got) != 2 || got[0].StreamVersion != 4 || got[1].StreamVersion != 3 {
		t.Fatalf("backward from end limit 2 = %v, %v", versions(got), err)
	}
	got, err = s.ReadStream(ctx(t), id, eventstore.ReadStreamOptions{Backward: true, From: 2})
	if err != nil || len(got) != 3 || got[0].StreamVersion != 2 || got[2].StreamVersion != 0 {
		t.Fatalf("backward from 2 = %v, %v", versions(got), err)
	}
}

func versions(es []eventstore.Event) []uint64 {
	out := make([]uint64, len(es))
	for i, e := range es {
		out[i] = e.StreamVersion
	}
	return out
}

func testReadAll(t *testing.T, s eventstore.Store) {
	a, b := stream(t, "la"), stream(t, "lb")
	ra := mustAppend(t, s, a, eventstore.NoStream(), evs(t, 2)...)
	mustAppend(t, s, b, eventstore.NoStream(), evs(t, 2)...)
	mustAppend(t, s, a, eventstore.Exact(1), ev(t, "A", 2))
	after := ra.FirstPosition - 1
	var mine []eventstore.Event
	for pos := after; ; {
		batch, err := s.ReadAll(ctx(t), pos, 2)
		if err != nil {
			t.Fatalf("read all: %v", err)
		}
		if len(batch) == 0 {
			break
		}
		if len(batch) > 2 {
			t.Fatalf("limit 2 returned %d", len(batch))
		}
		for _, e := range batch {
			if e.Position <= pos {
				t.Fatalf("position %d after %d: not increasing", e.Position, pos)
			}
			pos = e.Position
			if e.StreamID == a || e.StreamID == b {
				mine = append(mine, e)
			}
		}
	}
	want := []string{a, a, b, b, a}
	if len(mine) != len(want) {
		t.Fatalf("read %d of my events from the log, want %d", len(mine), len(want))
	}
	for i, e := range mine {
		if e.StreamID != want[i] {
			t.Fatalf("log order: event %d is from %s, want %s", i, e.StreamID, want[i])
		}
	}
	head, err := s.Head(ctx(t))
	if err != nil || head < mine[len(mine)-1].Position {
		t.Fatalf("head = %d, %v; last of mine at %d", head, err, mine[len(mine)-1].Position)
	}
}

func testReadAllOfTypes(t *testing.T, s eventstore.Store) {
	tr, ok := s.(eventstore.TypeReader)
	if !ok {
		t.Fatalf("%T claims TypedReads but is not an eventstore.TypeReader", s)
	}
	typ, other := "Typed"+uuid.NewString()[:8], "Other"+uuid.NewString()[:8]
	head, err := s.Head(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	id := stream(t, "typed")
	r := mustAppend(t, s, id, eventstore.NoStream(), ev(t, other, 0), ev(t, typ, 1), ev(t, other, 2), ev(t, typ, 3))
	mustAppend(t, s, stream(t, "typed"), eventstore.NoStream(), ev(t, typ, 4), ev(t, other, 5))
	want := []uint64{r.FirstPosition + 1, r.FirstPosition + 3} // and the first of the second append
	var got []uint64
	pos := head
	for i := 0; ; i++ {
		batch, upTo, err := tr.ReadAllOfTypes(ctx(t), pos, 2, []string{typ})
		if err != nil {
			t.Fatalf("typed read after %d: %v", pos, err)
		}
		if len(batch) > 2 {
			t.Fatalf("limit 2 returned %d", len(batch))
		}
		if upTo < pos {
			t.Fatalf("typed read after %d covered only up to %d", pos, upTo)
		}
		for _, e := range batch {
			if e.Type != typ || e.Position <= pos || e.Position > upTo {
				t.Fatalf("typed read after %d (to %d) returned %s at %d", pos, upTo, e.Type, e.Position)
			}
			got = append(got, e.Position)
		}
		if len(batch) == 0 && upTo == pos {
			break
		}
		if i > 100 {
			t.Fatal("typed reads never reached the head")
		}
		pos = upTo
	}
	if len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] <= want[1] {
		t.Fatalf("typed reads returned positions %v; want %v and the next append's first", got, want)
	}
	if pos < got[2] {
		t.Fatalf("typed reads stopped at %d, before their last event at %d", pos, got[2])
	}
}

func testMetadata(t *testing.T, s eventstore.Store) {
	id := stream(t, "md")
	e := ev(t, "A", 0)
	e.Metadata = eventstore.Metadata{CorrelationID: "corr-1", CausationID: "cause-1", Actor: "account:42", RequestID: "req-1"}
	mustAppend(t, s, id, eventstore.NoStream(), e)
	got := readStream(t, s, id)
	if len(got) != 1 || got[0].Metadata != e.Metadata {
		t.Fatalf("metadata = %+v, want %+v", got[0].Metadata, e.Metadata)
	}
}

// testUnstorable: an event whose data holds a \u0000 (or whose metadata
// holds a NUL) is refused by Append and AppendBulk with ErrNotStorable,
// and nothing of the append is written.
func testUnstorable(t *testing.T, s eventstore.Store) {
	id := stream(t, "nul")
	bad := ev(t, "A", 1)
	bad.Data = []byte(`{"name":"bad\u0000name"}`)
	badMD := ev(t, "A", 2)
	badMD.Metadata.Actor = "key:\x00"
	for name, e := range map[string]eventstore.NewEvent{"data": bad, "metadata": badMD} {
		if _, err := s.Append(ctx(t), id, eventstore.Any(), ev(t, "A", 0), e); !errors.Is(err, eventstore.ErrNotStorable) {
			t.Fatalf("Append with a NUL in its %s = %v, want ErrNotStorable", name, err)
		}
		if _, err := s.AppendBulk(ctx(t), []eventstore.Append{{StreamID: id, Expected: eventstore.Any(), Events: []eventstore.NewEvent{ev(t, "A", 0), e}}}); !errors.Is(err, eventstore.ErrNotStorable) {
			t.Fatalf("AppendBulk with a NUL in its %s = %v, want ErrNotStorable", name, err)
		}
	}
	if got := readStream(t, s, id); len(got) != 0 {
		t.Fatalf("a refused append wrote %d event(s)", len(got))
	}
}

func testConcurrentSameStream(t *testing.T, s eventstore.Store) {
	id := stream(t, "race")
	mustAppend(t, s, id, eventstore.NoStream(), ev(t, "A", 0))
	const n = 16
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins, conflicts := 0, 0
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, err := s.Append(ctx(t), id, eventstore.Exact(0), ev(t, "A", i))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				wins++
			case errors.Is(err, domain.ErrConcurrency):
				conflicts++
			default:
				t.Errorf("append %d: %v", i, err)
			}
		}(i)
	}
	wg.Wait()
	if wins != 1 || conflicts != n-1 {
		t.Fatalf("wins=%d conflicts=%d, want 1 and %d", wins, conflicts, n-1)
	}
}

func testConcurrentStreams(t *testing.T, s eventstore.Store) {
	const n = 32
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range ids {
		ids[i] = stream(t, "par")
		wg.Add(1)
		go func(id string) {
			defer wg.Done()
			for v := 0; v < 5; v++ {
				if _, err := s.Append(ctx(t), id, eventstore.AfterVersion(int64(v)-1), ev(t, "A", v)); err != nil {
					t.Errorf("append to %s: %v", id, err)
					return
				}
			}
		}(ids[i])
	}
	wg.Wait()
	for _, id := range ids {
		if got := readStream(t, s, id); len(got) != 5 {
			t.Fatalf("%s has %d events, want 5", id, len(got))
		}
	}
}

func testBulk(t *testing.T, s eventstore.Store) {
	a, b := stream(t, "bulk"), stream(t, "bulk")
	mustAppend(t, s, b, eventstore.NoStream(), ev(t, "A", 0))
	// One failing expectation fails the whole bulk.
	_, err := s.AppendBulk(ctx(t), []eventstore.Append{
		{StreamID: a, Expected: eventstore.NoStream(), Events: evs(t, 10)},
		{StreamID: b, Expected: eventstore.NoStream(), Events: evs(t, 10)},
	})
	wantConcurrency(t, err)
	if n := len(readStream(t, s, a)); n != 0 {
		t.Fatalf("failed bulk wrote %d events to %s", n, a)
	}
	res, err := s.AppendBulk(ctx(t), []eventstore.Append{
		{StreamID: a, Expected: eventstore.NoStream(), Events: evs(t, 1000)},
		{StreamID: b, Expected: eventstore.Exact(0), Events: evs(t, 500)},
	})
	if err != nil {
		t.Fatalf("bulk: %v", err)
	}
	if len(res) != 2 || res[0].LastVersion != 999 || res[1].FirstVersion != 1 || res[1].LastVersion != 500 {
		t.Fatalf("bulk results = %+v", res)
	}
	if n := len(readStream(t, s, a)); n != 1000 {
		t.Fatalf("%s has %d events, want 1000", a, n)
	}
	if n := len(readStream(t, s, b)); n != 501 {
		t.Fatalf("%s has %d events, want 501", b, n)
	}
}

func testBulkRetry(t *testing.T, s eventstore.Store) {
	a := stream(t, "bulkretry")
	batch := []eventstore.Append{{StreamID: a, Expected: eventstore.NoStream(), Events: evs(t, 300)}}
	first, err := s.AppendBulk(ctx(t), batch)
	if err != nil {
		t.Fatalf("bulk: %v", err)
	}
	again, err := s.AppendBulk(ctx(t), batch)
	if err != nil {
		t.Fatalf("bulk retry: %v", err)
	}
	if !again[0].Duplicate || again[0].FirstPosition != first[0].FirstPosition || again[0].LastPosition != first[0].LastPosition {
		t.Fatalf("retry = %+v, first = %+v", again[0], first[0])
	}
	if n := len(readStream(t, s, a)); n != 300 {
		t.Fatalf("%s has %d events after retry, want 300", a, n)
	}
}

// testBulkRoundTrip reads back a bulk large enough to go by COPY and checks
// every field: escapes and non-ASCII in data, empty and set metadata, schema
// versions, stream versions, positions and the recorded time.
func testBulkRoundTrip(t *testing.T, s eventstore.Store) {
	id := stream(t, "bulkrt")
	in := make([]eventstore.NewEvent, 600)
	for i := range in {
		data, _ := json.Marshal(map[string]any{"i": i, "s": fmt.Sprintf("tab\t nl\n quote\" back\\ ünï %d ✓", i), "nil": nil, "f": 1.5})
		in[i] = eventstore.NewEvent{ID: uuid.New(), Type: fmt.Sprintf("Type%d", i%3), SchemaVersion: 1 + i%4, Data: data}
		if i%2 == 0 {
			in[i].Metadata = eventstore.Metadata{CorrelationID: fmt.Sprintf("corr-%d", i), CausationID: "cause", Actor: "actor ✓", RequestID: "req"}
		}
	}
	before := time.Now().Add(-time.Minute)
	res, err := s.AppendBulk(ctx(t), []eventstore.Append{{StreamID: id, Expected: eventstore.NoStream(), Events: in}})
	if err != nil {
		t.Fatalf("bulk: %v", err)
	}
	got := readStream(t, s, id)
	if len(got) != len(in) {
		t.Fatalf("read %d events, want %d", len(got), len(in))
	}
	for i, e := range got {
		w := in[i]
		if e.ID != w.ID || e.StreamID != id || e.Type != w.Type || e.SchemaVersion != w.SchemaVersion || e.Metadata != w.Metadata {
			t.Fatalf("event %d = %+v, want %+v", i, e, w)
		}
		var gotData, wantData any
		if err := json.Unmarshal(e.Data, &gotData); err != nil {
			t.Fatalf("event %d data %q: %v", i, e.Data, err)
		}
		_ = json.Unmarshal(w.Data, &wantData)
		if fmt.Sprint(gotData) != fmt.Sprint(wantData) {
			t.Fatalf("event %d data = %s, want %s", i, e.Data, w.Data)
		}
		if e.StreamVersion != uint64(i) || e.Position != res[0].FirstPosition+uint64(i) {
			t.Fatalf("event %d at version %d position %d, want %d and %d", i, e.StreamVersion, e.Position, i, res[0].FirstPosition+uint64(i))
		}
		if e.RecordedAt.Before(before) || e.RecordedAt.After(time.Now().Add(time.Minute)) {
			t.Fatalf("event %d recorded at %s", i, e.RecordedAt)
		}
	}
}

func testSubscribe(t *testing.T, s eventstore.Store) {
	id := stream(t, "sub")
	r := mustAppend(t, s, id, eventstore.NoStream(), evs(t, 3)...)
	c, cancel := context.WithCancel(ctx(t))
	defer cancel()
	got := make(chan eventstore.Event, 100)
	done := make(chan error, 1)
	go func() {
		done <- s.Subscribe(c, r.FirstPosition-1, func(_ context.Context, es []eventstore.Event) error {
			for _, e := range es {
				if e.StreamID == id {
					got <- e
				}
			}
			return nil
		})
	}()
	for i := 3; i < 6; i++ {
		mustAppend(t, s, id, eventstore.Exact(uint64(i-1)), ev(t, "A", i))
	}
	for i := 0; i < 6; i++ {
		select {
		case e := <-got:
			if e.StreamVersion != uint64(i) {
				t.Fatalf("subscription delivered version %d, want %d", e.StreamVersion, i)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("subscription delivered %d of 6 events", i)
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("subscribe returned %v after cancel, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("subscribe did not return after cancel")
	}
}

func testWait(t *testing.T, s eventstore.Store) {
	head, err := s.Head(ctx(t))
	if err != nil {
		t.Fatalf("head: %v", err)
	}
	woke := make(chan error, 1)
	go func() { woke <- s.WaitForEvents(ctx(t), head) }()
	time.Sleep(50 * time.Millisecond)
	mustAppend(t, s, stream(t, "wait"), eventstore.NoStream(), ev(t, "A", 0))
	select {
	case err := <-woke:
		if err != nil {
			t.Fatalf("wait: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("WaitForEvents did not wake after an append")
	}
	c, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	h2, _ := s.Head(ctx(t))
	if err := s.WaitForEvents(c, h2+1000000); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("wait past the head returned %v, want deadline exceeded", err)
	}
}
