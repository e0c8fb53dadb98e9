package commands

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/eventlog"
	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/eventstore/signedlog"
	"github.com/arr-dev/arr/eventstore/transparency"
)

// DisownHeads disowns every kept head of the event log that the log's key
// (LogKey, under the log's name Origin) did not sign, for Reason, by By.
type DisownHeads struct {
	LogKey   ed25519.PublicKey
	Origin   string
	Reason   string
	By       string
	Metadata eventstore.Metadata
}

// DisownedHeads is what DisownHeads did: the heads, and the position of
// the LogHeadsDisowned event that records it.
type DisownedHeads struct {
	Heads    []eventlog.DisownedHead `json:"disowned"`
	Position uint64                  `json:"position"`
}

// DisownableHeads are the log's kept heads as DisownHeads needs them (the
// PostgreSQL store).
type DisownableHeads interface {
	AllHeads(ctx context.Context, from, to uint64) ([]eventstore.SignedHead, error)
	DisownHead(ctx context.Context, d eventstore.DisownedHead) (bool, error)
}

// DisownHeadsHandler handles DisownHeads.
type DisownHeadsHandler struct {
	store Appender
	heads DisownableHeads
	clock Clock
}

// NewDisownHeadsHandler refuses nil dependencies.
func NewDisownHeadsHandler(store Appender, heads DisownableHeads, clock Clock) (*DisownHeadsHandler, error) {
	if store == nil || heads == nil || clock == nil {
		return nil, errors.New("disown heads: nil dependency")
	}
	return &DisownHeadsHandler{store: store, heads: heads, clock: clock}, nil
}

// Handle finds the kept heads that do not verify under the log's key,
// appends LogHeadsDisowned naming them, then marks each disowned (so it is
// recorded in the log before it takes effect; run again after a crash in
// between, it records the heads still not marked). With none to disown it
// is a not-found error and records nothing.
func (h *DisownHeadsHandler) Handle(ctx context.Context, c DisownHeads) (DisownedHeads, error) {
	if len(c.LogKey) != ed25519.PublicKeySize {
		return DisownedHeads{}, errors.New("disown heads: no log key")
	}
	logFP := transparency.KeyFingerprint(c.LogKey)
	kept, err := h.heads.AllHeads(ctx, 0, 1<<63-1)
	if err != nil {
		return DisownedHeads{}, err
	}
	var foreign []eventlog.DisownedHead
	for _, k := range kept {
		if _, hk := signedlog.CheckHeadKey(k, c.Origin, c.LogKey); !hk.Log {
			foreign = append(foreign, eventlog.DisownedHead{Size: k.Size, RootHash: hex.EncodeToString(k.Root[:]),
				VerifierKey: k.VerifierKey, KeyFingerprint: hk.Fingerprint, Signed: hk.Signed})
		}
	}
	if len(foreign) == 0 {
		return DisownedHeads{}, domain.NotFound("no_foreign_heads", "every kept head of the log verifies under the log's key %s: there is nothing to disown", logFP)
	}
	at := h.clock().UTC()
	e, err := eventlog.Disown(foreign, logFP, c.Reason, c.By, at)
	if err != nil {
		return DisownedHeads{}, err
	}
	ne, err := eventstore.Encode(e, c.Metadata)
	if err != nil {
		return DisownedHeads{}, err
	}
	res, err := h.store.Append(ctx, eventlog.StreamID, eventstore.Any(), ne)
	if err != nil {
		return DisownedHeads{}, fmt.Errorf("recording the disowned heads: %w", err)
	}
	for _, d := range foreign {
		if _, err := h.heads.DisownHead(ctx, eventstore.DisownedHead{Size: d.Size, KeyFingerprint: d.KeyFingerprint, Reason: c.Reason,
			DisownedBy: c.By, DisownedAt: at, EventPosition: res.LastPosition}); err != nil {
			return DisownedHeads{}, err
		}
	}
	return DisownedHeads{Heads: foreign, Position: res.LastPosition}, nil
}
