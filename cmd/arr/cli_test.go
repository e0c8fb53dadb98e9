package main_test

import (
	"bufio"
	"encoding/json"
	"strings"
	"testing"
)

// TestEventsAndProjectionsCLI drives the analyst and operator commands:
// export, stats, tail, projections status and replay.
func TestEventsAndProjectionsCLI(t *testing.T) {
	e := newEnv(t)
	for _, email := range []string{"a@example.com", "b@example.com", "c@example.com"} {
		e.createAccount(email, "starter")
		e.mint(email, "gateway")
		e.mint(email, "records")
	}
	// 9 events: 3 × (AccountCreated, KeyIssued, KeyIssued).

	out, errs, code := e.arr("events", "export", "--from", "2", "--to", "7", "--format", "ndjson")
	if code != 0 {
		t.Fatalf("export: exit %d: %s", code, errs)
	}
	var positions []uint64
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var ev struct {
			ID       string          `json:"id"`
			Position uint64          `json:"position"`
			Type     string          `json:"type"`
			StreamID string          `json:"stream_id"`
			Data     json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("export line %q: %v", sc.Text(), err)
		}
		if ev.ID == "" || ev.Type == "" || !strings.HasPrefix(ev.StreamID, "account-") || len(ev.Data) == 0 {
			t.Fatalf("export line lacks fields: %s", sc.Text())
		}
		positions = append(positions, ev.Position)
	}
	if len(positions) != 5 || positions[0] != 3 || positions[4] != 7 {
		t.Fatalf("export --from 2 --to 7 gave positions %v, want 3..7", positions)
	}
	if !strings.Contains(errs, "export: done, 5 events") {
		t.Fatalf("export progress on stderr: %q", errs)
	}
	if _, _, code := e.arr("events", "export", "--format", "csv"); code == 0 {
		t.Fatalf("export --format csv succeeded")
	}

	var stats struct {
		Head  uint64 `json:"head"`
		Types []struct {
			Type   string `json:"type"`
			Events int64  `json:"events"`
		} `json:"types"`
		Categories []struct {
			Category string `json:"category"`
			Streams  int64  `json:"streams"`
			Events   int64  `json:"events"`
		} `json:"categories"`
	}
	e.mustArr(&stats, "events", "stats", "--json")
	counts := map[string]int64{}
	for _, ty := range stats.Types {
		counts[ty.Type] = ty.Events
	}
	if stats.Head != 9 || counts["AccountCreated"] != 3 || counts["KeyIssued"] != 6 {
		t.Fatalf("stats = %+v", stats)
	}
	if len(stats.Categories) != 1 || stats.Categories[0].Streams != 3 || stats.Categories[0].Events != 9 {
		t.Fatalf("stream categories = %+v", stats.Categories)
	}

	out, _, code = e.arr("events", "tail", "--follow=false", "--from", "7", "--json")
	if code != 0 || strings.Count(out, "\n") != 2 {
		t.Fatalf("tail --from 7: exit %d, %q", code, out)
	}

	var status struct {
		Head        uint64 `json:"head"`
		Projections []struct {
			Name      string `json:"name"`
			Position  int64  `json:"position"`
			LagEvents int64  `json:"lag_events"`
		} `json:"projections"`
	}
	e.mustArr(&status, "projections", "status", "--json", "--sample", "0s")
	names := map[string]int64{}
	for _, p := range status.Projections {
		names[p.Name] = p.Position
		if p.LagEvents != int64(status.Head)-p.Position {
			t.Fatalf("lag of %s = %d with head %d and position %d", p.Name, p.LagEvents, status.Head, p.Position)
		}
	}
	if _, ok := names["identity"]; !ok {
		t.Fatalf("status lists %v, want identity and logstats", names)
	}

	// An analyst's replay of the last three events only.
	_, errs, code = e.arr("projections", "replay", "logstats", "--from", "6")
	if code != 0 || !strings.Contains(errs, "replay logstats from 6: done") {
		t.Fatalf("replay: exit %d, %s", code, errs)
	}
	e.mustArr(&stats, "events", "stats", "--json")
	var total int64
	for _, ty := range stats.Types {
		total += ty.Events
	}
	if total != 3 {
		t.Fatalf("after replay --from 6 the stats count %d events, want 3", total)
	}
	if _, errs, code := e.arr("projections", "rebuild", "nosuch"); code == 0 || !strings.Contains(errs, "no projection named") {
		t.Fatalf("rebuild of an unknown projection: exit %d, %s", code, errs)
	}
}
