package main_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/eventstore/postgres"
	"github.com/arr-dev/arr/eventstore/transparency"
	"github.com/arr-dev/arr/eventstore/transparency/verifier"
)

// runArrIn runs one arr command with the environment env in the working
// directory dir ("": the test's), stopped after timeout (exit code -1).
func runArrIn(t testing.TB, env []string, dir string, timeout time.Duration, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env, cmd.Dir = env, dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("arr %v: %v", args, err)
		}
		code = ee.ExitCode()
	}
	return out.String(), errb.String(), code
}

// without drops the variables names from env.
func without(env []string, names ...string) []string {
	return slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		return slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(kv, n+"=") })
	})
}

// recordedFingerprint is the fingerprint the database records for a key.
func recordedFingerprint(t *testing.T, e *env, purpose string) string {
	t.Helper()
	var fp string
	if err := testPool(t, e).QueryRow(context.Background(), `SELECT fingerprint FROM key_fingerprints WHERE purpose = $1`, purpose).Scan(&fp); err != nil {
		t.Fatalf("the recorded fingerprint of %s: %v", purpose, err)
	}
	return fp
}

var fingerprintRE = regexp.MustCompile(`sha256:[0-9a-f]{64}`)

// TestKeysCLIFromAnotherFolder: with ARR_DATA_DIR unset, a CLI command run
// from another working directory looks for .arr/master.key or
// .arr/log-signing-key.pem there. It refuses (exit 2), naming the
// database's fingerprint and the path it looked at, and creates no key
// file; with another key file there it names both fingerprints. The
// servers' contact data stays readable, and imports from the right
// directory go on working.
func TestKeysCLIFromAnotherFolder(t *testing.T) {
	e := newEnv(t)
	e.up()
	e.createAccount("alice@example.com", "free")
	e.createAccount("bob@example.com", "free")
	alice, bob := e.mint("alice@example.com", "records"), e.mint("bob@example.com", "records")
	csv := filepath.Join(t.TempDir(), "leads.csv")
	if err := os.WriteFile(csv, []byte("apn,address,phone,email\n123,1 Main St,(410) 555-0142,owner@example.com\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var aliceList struct {
		ListID string `json:"list_id"`
	}
	e.mustArr(&aliceList, "import", "list", "--email", "alice@example.com", "--json", csv)

	elsewhere := t.TempDir()
	env := without(e.environ(), "ARR_DATA_DIR")
	masterFile := filepath.Join(elsewhere, ".arr", "master.key")
	out, errs, code := runArrIn(t, env, elsewhere, 2*time.Minute, "import", "list", "--email", "bob@example.com", csv)
	if code != 2 {
		t.Fatalf("import list from another folder: exit %d, want 2\nstdout: %s\nstderr: %s", code, out, errs)
	}
	if _, err := os.Stat(masterFile); !os.IsNotExist(err) {
		t.Fatalf("import list from another folder made %s (%v)", masterFile, err)
	}
	t.Logf("import list from another folder:\n%s", errs)
	master := recordedFingerprint(t, e, "records_master_key")
	for _, want := range []string{master, masterFile, "ARR_MASTER_KEY", "ARR_DATA_DIR"} {
		if !strings.Contains(errs, want) {
			t.Errorf("import list from another folder: the message does not name %q:\n%s", want, errs)
		}
	}

	signingFile := filepath.Join(elsewhere, ".arr", "log-signing-key.pem")
	out, errs, code = runArrIn(t, env, elsewhere, 2*time.Minute, "events", "checkpoint")
	if code != 2 {
		t.Fatalf("events checkpoint from another folder: exit %d, want 2\nstdout: %s\nstderr: %s", code, out, errs)
	}
	if _, err := os.Stat(signingFile); !os.IsNotExist(err) {
		t.Fatalf("events checkpoint from another folder made %s (%v)", signingFile, err)
	}
	for _, want := range []string{recordedFingerprint(t, e, "log_signing_key"), signingFile, "ARR_LOG_SIGNING_KEY"} {
		if !strings.Contains(errs, want) {
			t.Errorf("events checkpoint from another folder: the message does not name %q:\n%s", want, errs)
		}
	}

	// Another key file there: both fingerprints are named, and the file
	// is left as it was.
	if err := os.MkdirAll(filepath.Dir(masterFile), 0o700); err != nil {
		t.Fatal(err)
	}
	other := strings.Repeat("ab", 32) + "\n"
	if err := os.WriteFile(masterFile, []byte(other), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errs, code = runArrIn(t, env, elsewhere, 2*time.Minute, "import", "list", "--email", "bob@example.com", csv)
	t.Logf("import list with another key file:\n%s", errs)
	fps := fingerprintRE.FindAllString(errs, -1)
	slices.Sort(fps)
	if code != 2 || len(slices.Compact(fps)) != 2 || !slices.Contains(fps, master) || !strings.Contains(errs, masterFile) {
		t.Fatalf("import list with another master key file: exit %d, want 2 naming both fingerprints (the database's %s) and %s\nstdout: %s\nstderr: %s", code, master, masterFile, out, errs)
	}
	if b, _ := os.ReadFile(masterFile); string(b) != other {
		t.Fatalf("the other key file was changed: %q", b)
	}

	// The servers' contact data is readable, and bob imports from the
	// right directory.
	rowsOf := func(key, list string) string {
		status, body := get(t, e.records+"/api/v1/lists/"+list+"/rows?include_contact=1", map[string]string{"Authorization": "Bearer " + key})
		if status != http.StatusOK || !strings.Contains(string(body), `"contact_status":"ok"`) || !strings.Contains(string(body), "owner@example.com") {
			t.Fatalf("rows of list %s with contact: %d %s", list, status, body)
		}
		return string(body)
	}
	rowsOf(alice.Secret, aliceList.ListID)
	var bobList struct {
		ListID string `json:"list_id"`
	}
	e.mustArr(&bobList, "import", "list", "--email", "bob@example.com", "--json", csv)
	rowsOf(bob.Secret, bobList.ListID)
}

// TestKeysWrongConfiguredKeyStopsStart: once the database records the
// keys' fingerprints, `arr up` with another well-formed key (or a
// malformed one) in ARR_MASTER_KEY, ARR_AUDIT_HMAC_KEY or
// ARR_LOG_SIGNING_KEY exits 2 at start, naming the variable and both
// fingerprints.
func TestKeysWrongConfiguredKeyStopsStart(t *testing.T) {
	e := newEnv(t)
	p := e.up()
	p.stop(t)
	otherSeed := bytes.Repeat([]byte{0x42}, ed25519.SeedSize)
	cases := []struct {
		name, env, purpose string
	}{
		{"another master key", "ARR_MASTER_KEY=" + strings.Repeat("5c", 32), "records_master_key"},
		{"another audit key", "ARR_AUDIT_HMAC_KEY=" + strings.Repeat("6d", 32), "audit_hmac_key"},
		{"another log signing key", "ARR_LOG_SIGNING_KEY=" + base64.StdEncoding.EncodeToString(otherSeed), "log_signing_key"},
		{"a malformed master key", "ARR_MASTER_KEY=not-a-key", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			name := tc.env[:strings.Index(tc.env, "=")]
			out, errs, code := runArrIn(t, append(e.environ(), tc.env), "", 30*time.Second, "up")
			if code != 2 || !strings.Contains(errs, name) {
				t.Fatalf("arr up with %s: exit %d, want 2 naming %s\nstdout: %s\nstderr: %s", tc.name, code, name, out, errs)
			}
			t.Logf("arr up with %s:\n%s", tc.name, errs)
			if strings.Contains(errs, tc.env[len(name)+1:]) {
				t.Fatalf("the message shows the key:\n%s", errs)
			}
			if tc.purpose == "" {
				return
			}
			fps := fingerprintRE.FindAllString(errs, -1)
			slices.Sort(fps)
			if recorded := recordedFingerprint(t, e, tc.purpose); len(slices.Compact(fps)) != 2 || !slices.Contains(fps, recorded) {
				t.Fatalf("arr up with %s: the message does not name both fingerprints (the database's is %s):\n%s", tc.name, recorded, errs)
			}
		})
	}
}

// TestContactDataUnavailable: a list's contact columns whose data key
// cannot be unwrapped (wrapped by another master key, or damaged) are 503
// contact_data_unavailable with Retry-After, never 500; the rows without
// contact are still served, and an import for the account refuses before
// appending anything.
func TestContactDataUnavailable(t *testing.T) {
	e := newEnv(t)
	e.up()
	pool := testPool(t, e)
	e.createAccount("alice@example.com", "free")
	key := e.mint("alice@example.com", "records").Secret
	csv := filepath.Join(t.TempDir(), "leads.csv")
	if err := os.WriteFile(csv, []byte("apn,address,phone,email\n123,1 Main St,(410) 555-0142,owner@example.com\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var list struct {
		ListID string `json:"list_id"`
	}
	e.mustArr(&list, "import", "list", "--email", "alice@example.com", "--json", csv)
	rows := func(query string) (int, http.Header, []byte) {
		req, _ := http.NewRequest(http.MethodGet, e.records+"/api/v1/lists/"+list.ListID+"/rows"+query, nil)
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var buf bytes.Buffer
		_, _ = buf.ReadFrom(resp.Body)
		return resp.StatusCode, resp.Header, buf.Bytes()
	}
	if status, _, body := rows("?include_contact=1"); status != http.StatusOK {
		t.Fatalf("rows before: %d %s", status, body)
	}
	ctx := context.Background()
	var masterID string
	if err := pool.QueryRow(ctx, `SELECT master_id FROM records_data_keys`).Scan(&masterID); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, damage string }{
		{"wrapped by another master key", `UPDATE records_data_keys SET master_id = 'ffffffffffff'`},
		{"damaged", `UPDATE records_data_keys SET master_id = '` + masterID + `', wrapped_key = set_byte(wrapped_key, 20, get_byte(wrapped_key, 20) # 1)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := pool.Exec(ctx, tc.damage); err != nil {
				t.Fatal(err)
			}
			status, h, body := rows("?include_contact=1")
			var p struct {
				Error struct{ Code, Message string } `json:"error"`
			}
			_ = json.Unmarshal(body, &p)
			if status != http.StatusServiceUnavailable || p.Error.Code != "contact_data_unavailable" || h.Get("Retry-After") == "" || p.Error.Message == "" {
				t.Fatalf("rows with contact: %d (Retry-After %q) %s; want 503 contact_data_unavailable with Retry-After", status, h.Get("Retry-After"), body)
			}
			if status, _, body := rows(""); status != http.StatusOK {
				t.Fatalf("rows without contact: %d %s", status, body)
			}
			var before, after int64
			_ = pool.QueryRow(ctx, `SELECT count(*) FROM events WHERE event_type LIKE 'List%'`).Scan(&before)
			out, errs, code := e.arr("import", "list", "--email", "alice@example.com", csv)
			_ = pool.QueryRow(ctx, `SELECT count(*) FROM events WHERE event_type LIKE 'List%'`).Scan(&after)
			if code == 0 || !strings.Contains(errs, "contact_data_unavailable") || after != before {
				t.Fatalf("import with an unusable data key: exit %d, %d events appended\nstdout: %s\nstderr: %s", code, after-before, out, errs)
			}
		})
	}
}

// pubFingerprint is an Ed25519 public key's fingerprint as arr prints it.
func pubFingerprint(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// TestEventsVerifySignatures: verify fails when it can check no signature
// unless --allow-unsigned; it checks the kept heads with the public key the
// database records, without the secret key; a head signed by another key
// is named with both keys' fingerprints and what to do, and `arr events
// disown-heads` repairs it on the record.
func TestEventsVerifySignatures(t *testing.T) {
	e := newEnv(t)
	pool := seedLog(t, e, 40)
	out, errs, code := e.arr("events", "verify")
	if code == 0 || !strings.Contains(out+errs, "--allow-unsigned") {
		t.Fatalf("verify with no key and no head: exit %d, want non-zero naming --allow-unsigned\nstdout: %s\nstderr: %s", code, out, errs)
	}
	var rep verifyOut
	e.mustArr(&rep, "events", "verify", "--allow-unsigned", "--json")
	if !rep.Report.OK || rep.Report.Checked != 40 {
		t.Fatalf("verify --allow-unsigned: %+v", rep.Report)
	}

	// The log's key signs a head; verify then needs no secret key.
	e.extraEnv = append(e.extraEnv, logKeyEnv())
	e.mustArr(nil, "events", "checkpoint", "--json")
	if fp, want := recordedFingerprint(t, e, "log_signing_key"), pubFingerprint(ed25519.NewKeyFromSeed(logSeed).Public().(ed25519.PublicKey)); fp != want {
		t.Fatalf("recorded log key %s, want %s", fp, want)
	}
	out, errs, code = runArrIn(t, without(e.environ(), "ARR_LOG_SIGNING_KEY"), "", 2*time.Minute, "events", "verify", "--json")
	rep = verifyOut{}
	_ = json.Unmarshal([]byte(out), &rep)
	if code != 0 || !rep.Report.OK || !slices.Equal(rep.Report.HeadsMatched, []uint64{40}) {
		t.Fatalf("verify without the secret key: exit %d, %+v\n%s", code, rep.Report, errs)
	}

	// A head signed by another key, as `arr events checkpoint` run with
	// another key file signed (and GET /v1/log/head published) before.
	ctx := context.Background()
	st, err := postgres.New(pool, postgres.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for i := range 5 {
		ev := eventstore.NewEvent{ID: uuid.New(), Type: "Seeded", SchemaVersion: 1, Data: json.RawMessage(fmt.Sprintf(`{"i":%d}`, 100+i)), Metadata: eventstore.Metadata{Actor: "test"}}
		if _, err := st.Append(ctx, "seed-more", eventstore.Any(), ev); err != nil {
			t.Fatal(err)
		}
	}
	size, root, err := st.TreeHead(ctx)
	if err != nil || size != 45 {
		t.Fatalf("tree head: %d, %v", size, err)
	}
	foreign := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{0x17}, ed25519.SeedSize))
	head := verifier.Head{Origin: "arr.localhost/log", Size: size, Root: root, Timestamp: time.Now().UnixMilli()}
	note, err := transparency.SignCheckpoint(foreign, head)
	if err != nil {
		t.Fatal(err)
	}
	vk, err := verifier.VerifierKey(head.Origin, foreign.Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := st.SaveHead(ctx, eventstore.SignedHead{Head: head, Checkpoint: note, VerifierKey: vk}); !ok || err != nil {
		t.Fatalf("saving the foreign head: %v %v", ok, err)
	}
	logFP, foreignFP := pubFingerprint(ed25519.NewKeyFromSeed(logSeed).Public().(ed25519.PublicKey)), pubFingerprint(foreign.Public().(ed25519.PublicKey))
	out, errs, code = e.arr("events", "verify")
	t.Logf("verify with a foreign head:\n%s", out)
	if code != 1 || !strings.Contains(out, "size 45") || !strings.Contains(out, logFP) || !strings.Contains(out, foreignFP) || !strings.Contains(out, "arr events disown-heads") {
		t.Fatalf("verify with a head signed by another key: exit %d, want 1 naming the head, both fingerprints and arr events disown-heads\nstdout: %s\nstderr: %s", code, out, errs)
	}

	// The operator disowns it: recorded in the log, and a new head is
	// signed with the log's key.
	var dis struct {
		Disowned []struct {
			Size        uint64 `json:"size"`
			Fingerprint string `json:"key_fingerprint"`
		} `json:"disowned"`
		Head struct {
			Size        uint64 `json:"tree_size"`
			VerifierKey string `json:"verifier_key"`
		} `json:"head"`
	}
	e.mustArr(&dis, "events", "disown-heads", "--reason", "signed by a CLI run with another key file", "--json")
	if len(dis.Disowned) != 1 || dis.Disowned[0].Size != 45 || dis.Disowned[0].Fingerprint != foreignFP || dis.Head.Size != 46 || dis.Head.VerifierKey != logVerifierKey(t) {
		t.Fatalf("disown-heads: %+v", dis)
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM events WHERE event_type = 'LogHeadsDisowned' AND data::text LIKE '%another key file%'`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("LogHeadsDisowned events: %d, %v", n, err)
	}
	out, errs, code = e.arr("events", "verify")
	if code != 0 || !strings.Contains(out, "disowned") {
		t.Fatalf("verify after disowning: exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	if _, _, code := e.arr("events", "disown-heads", "--reason", "again"); code != 2 {
		t.Fatalf("disown-heads with nothing to disown: exit %d, want 2", code)
	}
}

// TestKeysAdoptionFollowsTheData: an installation from before the binding
// (its data made, no fingerprint recorded) adopts the key its data was
// made with, never another: a master key that wraps none of the stored
// data keys, or a signing key that signed none of the kept heads, is
// refused (exit 2) and nothing is recorded.
func TestKeysAdoptionFollowsTheData(t *testing.T) {
	e := newEnv(t)
	pool := seedLog(t, e, 30)
	e.createAccount("alice@example.com", "free")
	csv := filepath.Join(t.TempDir(), "leads.csv")
	if err := os.WriteFile(csv, []byte("apn,address,phone\n123,1 Main St,(410) 555-0142\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	keyA, keyB := strings.Repeat("a1", 32), strings.Repeat("b2", 32)
	seedA, seedB := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, 32)), base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{2}, 32))
	env := func(kv ...string) []string { return append(e.environ(), kv...) }
	if out, errs, code := runArrIn(t, env("ARR_MASTER_KEY="+keyA), "", 2*time.Minute, "import", "list", "--email", "alice@example.com", csv); code != 0 {
		t.Fatalf("first import: exit %d\n%s\n%s", code, out, errs)
	}
	if out, errs, code := runArrIn(t, env("ARR_LOG_SIGNING_KEY="+seedA), "", 2*time.Minute, "events", "checkpoint"); code != 0 {
		t.Fatalf("first checkpoint: exit %d\n%s\n%s", code, out, errs)
	}
	// As before the binding: the data is there, no fingerprint is.
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `DELETE FROM key_fingerprints`); err != nil {
		t.Fatal(err)
	}
	out, errs, code := runArrIn(t, env("ARR_MASTER_KEY="+keyB), "", 2*time.Minute, "import", "list", "--email", "alice@example.com", csv)
	if code != 2 || !strings.Contains(errs, "none by this key") || !strings.Contains(errs, "ARR_MASTER_KEY") {
		t.Fatalf("adopting a master key that wraps no data key: exit %d, want 2\n%s\n%s", code, out, errs)
	}
	out, errs, code = runArrIn(t, env("ARR_LOG_SIGNING_KEY="+seedB), "", 2*time.Minute, "events", "checkpoint")
	if code != 2 || !strings.Contains(errs, "none by this key") || !strings.Contains(errs, "ARR_LOG_SIGNING_KEY") {
		t.Fatalf("adopting a signing key that signed no head: exit %d, want 2\n%s\n%s", code, out, errs)
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM key_fingerprints`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("refused keys were recorded: %d rows, %v", n, err)
	}
	if out, errs, code := runArrIn(t, env("ARR_MASTER_KEY="+keyA), "", 2*time.Minute, "import", "list", "--email", "alice@example.com", csv); code != 0 {
		t.Fatalf("adopting the data's master key: exit %d\n%s\n%s", code, out, errs)
	}
	if out, errs, code := runArrIn(t, env("ARR_LOG_SIGNING_KEY="+seedA), "", 2*time.Minute, "events", "checkpoint"); code != 0 {
		t.Fatalf("adopting the heads' signing key: exit %d\n%s\n%s", code, out, errs)
	}
	if recordedFingerprint(t, e, "log_signing_key") != pubFingerprint(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{1}, 32)).Public().(ed25519.PublicKey)) {
		t.Fatal("the adopted signing key is not the heads' key")
	}
}
