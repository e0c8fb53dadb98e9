package main_test

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/eventstore/postgres"
	"github.com/arr-dev/arr/eventstore/transparency/verifier"
)

// logSeed is the seed of the log's signing key in these tests.
var logSeed = func() []byte {
	b := make([]byte, ed25519.SeedSize)
	for i := range b {
		b[i] = byte(0xa0 + i)
	}
	return b
}()

func logKeyEnv() string { return "ARR_LOG_SIGNING_KEY=" + base64.StdEncoding.EncodeToString(logSeed) }

// logVerifierKey is the note verifier key of logSeed under the default
// origin.
func logVerifierKey(t testing.TB) string {
	t.Helper()
	vk, err := verifier.VerifierKey("arr.localhost/log", ed25519.NewKeyFromSeed(logSeed).Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	return vk
}

// seedLog appends n events to the env's log through the store: single
// appends, a group of concurrent ones and a bulk.
func seedLog(t testing.TB, e *env, n int) *pgxpool.Pool {
	t.Helper()
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, e.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	st, err := postgres.New(pool, postgres.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	mk := func(i int) eventstore.NewEvent {
		return eventstore.NewEvent{ID: uuid.New(), Type: "Seeded", SchemaVersion: 1,
			Data: json.RawMessage(fmt.Sprintf(`{"i":%d,"note":"seed <%d> & more"}`, i, i)), Metadata: eventstore.Metadata{Actor: "test", RequestID: fmt.Sprint("r", i)}}
	}
	for i := range 20 {
		if _, err := st.Append(ctx, fmt.Sprintf("seed-%d", i%3), eventstore.Any(), mk(i)); err != nil {
			t.Fatal(err)
		}
	}
	bulk := make([]eventstore.NewEvent, n-20)
	for i := range bulk {
		bulk[i] = mk(20 + i)
	}
	appendBulk(t, pool, "seed-bulk", bulk)
	return pool
}

// appendBulk appends evs to a new stream in one transaction (COPY), the
// cheap way to give a test a long log.
func appendBulk(t testing.TB, pool *pgxpool.Pool, stream string, evs []eventstore.NewEvent) {
	t.Helper()
	st, err := postgres.New(pool, postgres.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.AppendBulk(context.Background(), []eventstore.Append{{StreamID: stream, Expected: eventstore.NoStream(), Events: evs}}); err != nil {
		t.Fatalf("appending %d events to %s: %v", len(evs), stream, err)
	}
}

// tamper runs statements with the immutability triggers off, as someone
// with the database's superuser password could.
func tamper(t testing.TB, pool *pgxpool.Pool, stmts ...string) {
	t.Helper()
	ctx := context.Background()
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck
	if _, err := tx.Exec(ctx, `SET LOCAL session_replication_role = replica`); err != nil {
		t.Fatal(err)
	}
	for _, s := range stmts {
		if _, err := tx.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
}

type verifyOut struct {
	Report struct {
		OK           bool     `json:"ok"`
		Checked      uint64   `json:"checked"`
		TreeSize     uint64   `json:"tree_size"`
		HeadsMatched []uint64 `json:"heads_matched"`
		Problem      *struct {
			Kind     string `json:"kind"`
			Position uint64 `json:"position"`
			After    uint64 `json:"after"`
			Upto     uint64 `json:"upto"`
			Message  string `json:"message"`
		} `json:"problem"`
	} `json:"report"`
}

// TestEventsVerifyNamesTampering alters, inserts, deletes and reorders
// events directly in PostgreSQL after a head was signed and kept outside
// arr, and checks that `arr events verify --head` names the first bad
// position each time.
func TestEventsVerifyNamesTampering(t *testing.T) {
	// shift moves positions >= from by delta in two steps (positions are
	// a primary key).
	shift := func(from, delta int) []string {
		return []string{
			fmt.Sprintf(`UPDATE events SET position = -position WHERE position >= %d`, from),
			fmt.Sprintf(`UPDATE events SET position = -position + (%d) WHERE position < 0`, delta),
		}
	}
	insertAt := func(pos int) string {
		return fmt.Sprintf(`INSERT INTO events (position, event_id, stream_id, stream_version, event_type, schema_version, data, recorded_at)
			VALUES (%d, gen_random_uuid(), 'forged', 0, 'Seeded', 1, '{"i":"forged"}', now())`, pos)
	}
	cases := []struct {
		name    string
		stmts   []string
		kind    string
		pos     uint64
		inMsg   string
		logHead bool // also move event_log_head as the tamperer would
	}{
		{name: "data altered", stmts: []string{`UPDATE events SET data = '{"i":56,"note":"changed"}' WHERE position = 57`}, kind: "altered", pos: 57},
		{name: "metadata altered", stmts: []string{`UPDATE events SET actor = 'someone else' WHERE position = 130`}, kind: "altered", pos: 130},
		{name: "recorded time altered", stmts: []string{`UPDATE events SET recorded_at = recorded_at - interval '1 day' WHERE position = 3`}, kind: "altered", pos: 3},
		{name: "event deleted", stmts: []string{`DELETE FROM events WHERE position = 57`}, kind: "removed", pos: 57},
		{name: "event deleted and the rest renumbered", stmts: append([]string{`DELETE FROM events WHERE position = 57`}, shift(58, -1)...), kind: "removed", pos: 57, inMsg: "moved down"},
		{name: "event inserted and the rest renumbered", stmts: append(shift(57, 1), insertAt(57)), kind: "inserted", pos: 57, inMsg: "moved up"},
		{name: "events reordered", stmts: []string{
			`UPDATE events SET position = -1 WHERE position = 57`, `UPDATE events SET position = 57 WHERE position = 120`, `UPDATE events SET position = 120 WHERE position = -1`,
		}, kind: "altered", pos: 57},
		{name: "last events deleted", stmts: []string{`DELETE FROM events WHERE position > 250`, `UPDATE event_log_head SET position = 250`}, kind: "removed", pos: 251},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.extraEnv = append(e.extraEnv, logKeyEnv())
			pool := seedLog(t, e, 300)
			var cp struct {
				Head struct {
					Size       uint64 `json:"tree_size"`
					Checkpoint string `json:"checkpoint"`
				} `json:"head"`
			}
			e.mustArr(&cp, "events", "checkpoint", "--json")
			if cp.Head.Size != 300 {
				t.Fatalf("checkpoint of size %d, want 300", cp.Head.Size)
			}
			headFile := filepath.Join(t.TempDir(), "head.txt")
			if err := os.WriteFile(headFile, []byte(cp.Head.Checkpoint), 0o600); err != nil {
				t.Fatal(err)
			}
			var before verifyOut
			e.mustArr(&before, "events", "verify", "--head", headFile, "--json")
			if !before.Report.OK || before.Report.Checked != 300 || len(before.Report.HeadsMatched) != 1 {
				t.Fatalf("verify before tampering: %+v", before.Report)
			}

			tamper(t, pool, tc.stmts...)
			out, errs, code := e.arr("events", "verify", "--head", headFile, "--key", logVerifierKey(t), "--json")
			if code != 1 {
				t.Fatalf("verify after tampering: exit %d\n%s\n%s", code, out, errs)
			}
			var got verifyOut
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			p := got.Report.Problem
			if got.Report.OK || p == nil || p.Kind != tc.kind || p.Position != tc.pos || !strings.Contains(p.Message, tc.inMsg) {
				t.Fatalf("verify found %+v, want %s at %d", p, tc.kind, tc.pos)
			}
			// The text form names the position too, and the progress
			// report went to stderr.
			text, errs, code := e.arr("events", "verify", "--head", headFile)
			if code != 1 || !strings.Contains(text, fmt.Sprintf("BROKEN at position %d (%s)", tc.pos, tc.kind)) || !strings.Contains(errs, "verify: done") {
				t.Fatalf("verify text: exit %d\n%s\n%s", code, text, errs)
			}
		})
	}
}

// A head file that is not signed by the log's key is refused; so is a
// kept head that is not.
func TestEventsVerifyRefusesForgedHeads(t *testing.T) {
	e := newEnv(t)
	e.extraEnv = append(e.extraEnv, logKeyEnv())
	pool := seedLog(t, e, 40)
	var cp struct {
		Head struct {
			Checkpoint string `json:"checkpoint"`
		} `json:"head"`
	}
	e.mustArr(&cp, "events", "checkpoint", "--json")
	forged := strings.Replace(cp.Head.Checkpoint, "\n40\n", "\n39\n", 1)
	headFile := filepath.Join(t.TempDir(), "head.txt")
	if err := os.WriteFile(headFile, []byte(forged), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, errs, code := e.arr("events", "verify", "--head", headFile); code == 0 || !strings.Contains(errs, "does not verify") {
		t.Fatalf("verify with a forged head: exit %d\n%s\n%s", code, out, errs)
	}
	// A head written into the database by someone without the key.
	tamper(t, pool, `INSERT INTO event_tree_heads (size, root, timestamp_ms, origin, verifier_key, checkpoint)
		SELECT 20, root, timestamp_ms, origin, verifier_key, replace(checkpoint, E'\n40\n', E'\n20\n') FROM event_tree_heads WHERE size = 40`)
	out, _, code := e.arr("events", "verify")
	if code != 1 || !strings.Contains(out, "does not verify") {
		t.Fatalf("verify with a forged kept head: exit %d\n%s", code, out)
	}
}
