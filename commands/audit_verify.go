package commands

import (
	"context"
	"errors"
	"fmt"

	"github.com/arr-dev/arr/domain/audit"
	"github.com/arr-dev/arr/domain/catalog"
	"github.com/arr-dev/arr/eventstore"
)

// ChainReport is the result of VerifyChain.
type ChainReport struct {
	OK            bool         `json:"ok"`
	Checked       uint64       `json:"checked"`
	FirstSeq      uint64       `json:"first_seq"`
	LastSeq       uint64       `json:"last_seq"`
	FirstPosition uint64       `json:"first_position"`
	LastPosition  uint64       `json:"last_position"`
	HeadHash      string       `json:"head_hash,omitempty"`
	Broken        *BrokenEntry `json:"broken,omitempty"`
}

// BrokenEntry names the first entry that does not verify.
type BrokenEntry struct {
	Position uint64 `json:"position"`
	Seq      uint64 `json:"seq"`
	EventID  string `json:"event_id"`
	Problem  string `json:"problem"`
}

// VerifyChain walks the gateway's audit chain in the event log from the
// first entry at or after log position from, and names the first entry
// whose sequence number, link to the entry before or hash does not verify
// (audit.Verify). The auditor's check: it reads the log, never a read
// model.
func VerifyChain(ctx context.Context, store StreamReader, from uint64) (ChainReport, error) {
	start, err := firstVersionAt(ctx, store, from)
	if err != nil {
		return ChainReport{}, err
	}
	rep := ChainReport{OK: true, FirstSeq: start}
	reg := catalog.Registry()
	prev := audit.Genesis
	if start > 0 {
		evs, err := store.ReadStream(ctx, audit.StreamID, eventstore.ReadStreamOptions{From: start - 1, Limit: 1})
		if err != nil {
			return rep, err
		}
		if len(evs) == 1 {
			if e, err := decodeEntry(reg, evs[0]); err == nil {
				prev = e.Hash
			}
		}
	}
	next := start
	for {
		evs, err := store.ReadStream(ctx, audit.StreamID, eventstore.ReadStreamOptions{From: next, Limit: eventstore.DefaultBatch})
		if err != nil {
			return rep, fmt.Errorf("reading the audit chain at entry %d: %w", next, err)
		}
		for _, ev := range evs {
			e := &audit.CompletionRecorded{}
			problem := ""
			if ev.Type != (audit.CompletionRecorded{}).EventType() {
				problem = "event of type " + ev.Type + " in the audit chain's stream"
			} else if e, err = decodeEntry(reg, ev); err != nil {
				problem = "unreadable entry: " + err.Error()
			} else if err := audit.Verify(e, prev, ev.StreamVersion); err != nil {
				problem = err.Error()
			}
			if problem != "" {
				rep.OK = false
				rep.Broken = &BrokenEntry{Position: ev.Position, Seq: ev.StreamVersion, EventID: ev.ID.String(), Problem: problem}
				return rep, nil
			}
			if rep.Checked == 0 {
				rep.FirstPosition = ev.Position
			}
			rep.Checked++
			rep.LastSeq, rep.LastPosition, rep.HeadHash = ev.StreamVersion, ev.Position, e.Hash
			prev = e.Hash
		}
		if len(evs) < eventstore.DefaultBatch {
			return rep, nil
		}
		next = evs[len(evs)-1].StreamVersion + 1
	}
}

// firstVersionAt finds the first chain entry whose log position is at
// least pos, by binary search over stream versions.
func firstVersionAt(ctx context.Context, store StreamReader, pos uint64) (uint64, error) {
	if pos == 0 {
		return 0, nil
	}
	last, err := store.ReadStream(ctx, audit.StreamID, eventstore.ReadStreamOptions{Backward: true, FromEnd: true, Limit: 1})
	if err != nil {
		return 0, err
	}
	if len(last) == 0 {
		return 0, nil
	}
	lo, hi := uint64(0), last[0].StreamVersion+1
	for lo < hi {
		mid := (lo + hi) / 2
		evs, err := store.ReadStream(ctx, audit.StreamID, eventstore.ReadStreamOptions{From: mid, Limit: 1})
		if err != nil {
			return 0, err
		}
		if len(evs) == 0 {
			return 0, errors.New("the audit chain's stream has a gap")
		}
		if evs[0].Position < pos {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo, nil
}
