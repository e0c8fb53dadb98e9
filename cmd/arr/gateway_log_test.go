package main_test

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/eventstore/transparency/verifier"
)

type signedHeadView struct {
	Size        uint64 `json:"tree_size"`
	RootHash    []byte `json:"root_hash"`
	Checkpoint  string `json:"checkpoint"`
	VerifierKey string `json:"verifier_key"`
}

// pinnedHead reads GET /v1/log/head until its tree has at least min leaves
// and checks its checkpoint with the verifier key the test pinned, not the
// one the response names.
func pinnedHead(t *testing.T, base string, min uint64) verifier.Head {
	t.Helper()
	name, pub, err := verifier.ParseVerifierKey(logVerifierKey(t))
	if err != nil {
		t.Fatal(err)
	}
	var h signedHeadView
	eventually(t, 20*time.Second, fmt.Sprintf("a signed head of at least %d events", min), func() bool {
		code, body := get(t, base+"/v1/log/head", nil)
		if code != http.StatusOK {
			return false
		}
		if err := json.Unmarshal(body, &h); err != nil {
			t.Fatalf("log head: %v: %s", err, body)
		}
		return h.Size >= min
	})
	got, err := verifier.OpenCheckpoint([]byte(h.Checkpoint), name, pub)
	if err != nil {
		t.Fatalf("the served checkpoint does not verify with the pinned key: %v", err)
	}
	if got.Size != h.Size || string(got.Root[:]) != string(h.RootHash) || h.VerifierKey != logVerifierKey(t) {
		t.Fatalf("served head %+v disagrees with its checkpoint %+v", h, got)
	}
	return got
}

func b64Hashes(t *testing.T, in []string) [][]byte {
	t.Helper()
	out := make([][]byte, len(in))
	for i, s := range in {
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = b
	}
	return out
}

// exportedLeaf rebuilds the leaf hash of the event at pos from `arr events
// export`, as an auditor would: data and metadata are the bytes of the
// exported line.
func exportedLeaf(t *testing.T, e *env, pos uint64) [verifier.HashSize]byte {
	t.Helper()
	out, errs, code := e.arr("events", "export", "--from", fmt.Sprint(pos-1), "--to", fmt.Sprint(pos))
	if code != 0 {
		t.Fatalf("export: %d %s", code, errs)
	}
	sc := bufio.NewScanner(strings.NewReader(out))
	if !sc.Scan() {
		t.Fatalf("export of %d is empty", pos)
	}
	var ev struct {
		ID            uuid.UUID       `json:"id"`
		StreamID      string          `json:"stream_id"`
		Type          string          `json:"type"`
		SchemaVersion int             `json:"schema_version"`
		Data          json.RawMessage `json:"data"`
		Metadata      json.RawMessage `json:"metadata"`
		RecordedAt    time.Time       `json:"recorded_at"`
		StreamVersion uint64          `json:"stream_version"`
		Position      uint64          `json:"position"`
	}
	if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
		t.Fatal(err)
	}
	h, err := verifier.EventLeafHash(verifier.Event{Position: ev.Position, ID: ev.ID, StreamID: ev.StreamID, StreamVersion: ev.StreamVersion,
		Type: ev.Type, SchemaVersion: ev.SchemaVersion, Data: ev.Data, Metadata: ev.Metadata, RecordedAt: ev.RecordedAt.UnixMicro()})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestGatewayLogProofs: a completion's audit entry names its log position;
// the gateway serves a signed head over it and an inclusion proof that the
// standalone verifier checks against the head with the leaf rebuilt from
// the exported event; a later head comes with a consistency proof.
func TestGatewayLogProofs(t *testing.T) {
	g := newGateway(t, "starter", logKeyEnv(), "ARR_LOG_CHECKPOINT_INTERVAL=1s")
	code, _, out := g.chat(t, map[string]any{"messages": userMsg("Is this logged?")})
	if code != http.StatusOK {
		t.Fatalf("completion: %d %v", code, out)
	}
	hash := routingOf(t, out)["audit_hash"].(string)
	code, body := get(t, g.gateway+"/v1/audit/"+hash, nil)
	var entry struct {
		Position       uint64 `json:"position"`
		InclusionProof string `json:"inclusion_proof"`
	}
	if code != http.StatusOK || json.Unmarshal(body, &entry) != nil || entry.Position == 0 ||
		entry.InclusionProof != fmt.Sprintf("/v1/log/proof/inclusion?position=%d", entry.Position) {
		t.Fatalf("audit entry: %d %s", code, body)
	}
	head1 := pinnedHead(t, g.gateway, entry.Position)

	var proof struct {
		Position   uint64          `json:"position"`
		LeafIndex  uint64          `json:"leaf_index"`
		TreeSize   uint64          `json:"tree_size"`
		LeafHash   []byte          `json:"leaf_hash"`
		AuditPath  []string        `json:"audit_path"`
		SignedHead *signedHeadView `json:"signed_head"`
	}
	code, body = get(t, fmt.Sprintf("%s%s&size=%d", g.gateway, entry.InclusionProof, head1.Size), nil)
	if code != http.StatusOK || json.Unmarshal(body, &proof) != nil || proof.TreeSize != head1.Size || proof.LeafIndex != entry.Position-1 || proof.SignedHead == nil {
		t.Fatalf("inclusion proof: %d %s", code, body)
	}
	leaf := exportedLeaf(t, g.env, entry.Position)
	if string(leaf[:]) != string(proof.LeafHash) {
		t.Fatalf("the exported event hashes to %x, the log's leaf is %x", leaf, proof.LeafHash)
	}
	if err := verifier.VerifyInclusion(proof.LeafIndex, head1.Size, leaf[:], b64Hashes(t, proof.AuditPath), head1.Root[:]); err != nil {
		t.Fatalf("inclusion of the completion's event: %v", err)
	}

	// More events, a later head, and the proof it extends the first.
	g.createAccount("later@example.com", "free")
	code, _, _ = g.chat(t, map[string]any{"messages": userMsg("And this one?")})
	if code != http.StatusOK {
		t.Fatalf("second completion: %d", code)
	}
	head2 := pinnedHead(t, g.gateway, head1.Size+2)
	var cons struct {
		First, Second uint64
		Consistency   []string `json:"consistency"`
	}
	code, body = get(t, fmt.Sprintf("%s/v1/log/proof/consistency?first=%d&second=%d", g.gateway, head1.Size, head2.Size), nil)
	if code != http.StatusOK || json.Unmarshal(body, &cons) != nil {
		t.Fatalf("consistency proof: %d %s", code, body)
	}
	if err := verifier.VerifyConsistency(head1.Size, head2.Size, head1.Root[:], head2.Root[:], b64Hashes(t, cons.Consistency)); err != nil {
		t.Fatalf("consistency %d -> %d: %v", head1.Size, head2.Size, err)
	}
	// The proof against a head's root the log never signed fails.
	bogus := head1.Root
	bogus[0] ^= 1
	if err := verifier.VerifyConsistency(head1.Size, head2.Size, bogus[:], head2.Root[:], b64Hashes(t, cons.Consistency)); err == nil {
		t.Fatalf("a consistency proof verified against a root the log never had")
	}

	var list struct {
		Data    []signedHeadView `json:"data"`
		HasMore bool             `json:"has_more"`
	}
	code, body = get(t, g.gateway+"/v1/log/heads?since="+fmt.Sprint(head1.Size)+"&limit=1000", nil)
	if code != http.StatusOK || json.Unmarshal(body, &list) != nil || len(list.Data) < 2 || list.Data[0].Size != head1.Size || list.HasMore {
		t.Fatalf("heads since %d: %d %s", head1.Size, code, body)
	}
	for i := 1; i < len(list.Data); i++ {
		if list.Data[i].Size <= list.Data[i-1].Size {
			t.Fatalf("heads out of order: %s", body)
		}
	}

	for _, tc := range []struct {
		path, code string
	}{
		{"/v1/log/proof/inclusion", "missing_position"},
		{"/v1/log/proof/inclusion?position=abc", "invalid_position"},
		{"/v1/log/proof/inclusion?position=0&size=1", "invalid_position"},
		{"/v1/log/proof/inclusion?position=1&size=99999999", "tree_size_too_large"},
		{"/v1/log/proof/inclusion?position=1&sise=3", "invalid_query_parameter"},
		{"/v1/log/proof/consistency?second=3", "missing_first"},
		{fmt.Sprintf("/v1/log/proof/consistency?first=%d&second=1", head2.Size), "first_above_second"},
		{"/v1/log/heads?limit=0", "invalid_limit"},
		{"/v1/log/heads?since=-1", "invalid_since"},
	} {
		code, body := get(t, g.gateway+tc.path, nil)
		var e struct {
			Error struct{ Code, Type string }
		}
		if code != http.StatusBadRequest || json.Unmarshal(body, &e) != nil || e.Error.Code != tc.code || e.Error.Type != "invalid_request_error" {
			t.Errorf("GET %s: %d %s, want 400 %s", tc.path, code, body, tc.code)
		}
	}
}
