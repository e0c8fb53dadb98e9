package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/arr-dev/arr/domain/audit"
	"github.com/arr-dev/arr/eventstore"
)

func (a *app) auditCmd() *cobra.Command {
	c := &cobra.Command{Use: "audit", Short: "Check the gateway's audit chain"}
	var from uint64
	var asJSON bool
	verify := &cobra.Command{
		Use:   "verify [--from POS] [--json]",
		Short: "Walk the audit chain in the event log and name the first broken link (exit 1)",
		Long: "Walk the audit chain (the CompletionRecorded events of stream " + audit.StreamID + ") and check every entry: its sequence\n" +
			"number, its prev_hash against the hash of the entry before it, and its hash by the entry's link algorithm:\n" +
			"  link 1 (entries without a \"link\" field, schema version 1): " + audit.LinkV1Rule + "\n" +
			"  link 2: " + audit.LinkV2Rule + ",\n  where " + audit.PayloadSHA256Rule + "\n" +
			"--from starts at the first entry at or after that log position (its link to the entry before is checked too).\n" +
			"Exit status 0: the chain verifies; 1: it does not, and the first broken entry's log position is named.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := a.open(cmd, openOptions{})
			if err != nil {
				return err
			}
			defer s.Close()
			res, err := verifyChain(cmd.Context(), s.store, from)
			if err != nil {
				return err
			}
			if asJSON {
				if err := printJSON(cmd.OutOrStdout(), res); err != nil {
					return err
				}
			} else if res.OK {
				fmt.Fprintf(cmd.OutOrStdout(), "audit chain verifies: %d entries checked (seq %d..%d, log positions %d..%d), head %s\n",
					res.Checked, res.FirstSeq, res.LastSeq, res.FirstPosition, res.LastPosition, res.HeadHash)
			} else {
				fmt.Fprintf(cmd.OutOrStdout(), "audit chain BROKEN at log position %d (seq %d, event %s): %s\n%d entries verified before it\n",
					res.Broken.Position, res.Broken.Seq, res.Broken.EventID, res.Broken.Problem, res.Checked)
			}
			if !res.OK {
				return errChainBroken{pos: res.Broken.Position}
			}
			return nil
		},
	}
	verify.Flags().Uint64Var(&from, "from", 0, "start at the first entry at or after this log position")
	verify.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	c.AddCommand(verify)
	return c
}

// errChainBroken makes arr exit with status 1 after the report.
type errChainBroken struct{ pos uint64 }

func (e errChainBroken) Error() string {
	return fmt.Sprintf("audit chain broken at log position %d", e.pos)
}

// ChainReport is the result of verifyChain.
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

// verifyChain checks the chain from the first entry at or after position
// from.
func verifyChain(ctx context.Context, store eventstore.Store, from uint64) (ChainReport, error) {
	start, err := firstVersionAt(ctx, store, from)
	if err != nil {
		return ChainReport{}, err
	}
	rep := ChainReport{OK: true, FirstSeq: start}
	prev := audit.Genesis
	if start > 0 {
		evs, err := store.ReadStream(ctx, audit.StreamID, eventstore.ReadStreamOptions{From: start - 1, Limit: 1})
		if err != nil {
			return rep, err
		}
		var e audit.CompletionRecorded
		if len(evs) == 1 && json.Unmarshal(evs[0].Data, &e) == nil {
			prev = e.Hash
		}
	}
	next := start
	for {
		evs, err := store.ReadStream(ctx, audit.StreamID, eventstore.ReadStreamOptions{From: next, Limit: eventstore.DefaultBatch})
		if err != nil {
			return rep, fmt.Errorf("reading the audit chain at entry %d: %w", next, err)
		}
		for _, ev := range evs {
			var e audit.CompletionRecorded
			problem := ""
			if ev.Type != (audit.CompletionRecorded{}).EventType() {
				problem = "event of type " + ev.Type + " in the audit chain's stream"
			} else if err := json.Unmarshal(ev.Data, &e); err != nil {
				problem = "unreadable entry: " + err.Error()
			} else if err := audit.Verify(&e, prev, ev.StreamVersion); err != nil {
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
func firstVersionAt(ctx context.Context, store eventstore.Store, pos uint64) (uint64, error) {
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
