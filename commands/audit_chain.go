package commands

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/audit"
	"github.com/arr-dev/arr/eventstore"
)

// RecordCompletion appends one completion to the audit chain.
type RecordCompletion struct {
	Completion audit.Completion
	Metadata   eventstore.Metadata
}

// Recorded says where a completion landed in the chain.
type Recorded struct {
	Hash     string
	PrevHash string
	Seq      uint64
	Position uint64
}

// AuditChainConfig configures an AuditChain.
type AuditChainConfig struct {
	// MaxBatch caps the entries one append carries. Default 2048.
	MaxBatch int
	// MaxAttempts bounds the tries of one batch (conflicts with another
	// process included). Default 50.
	MaxAttempts int
	// AppendTimeout bounds one append. Default 10s.
	AppendTimeout time.Duration
	Logger        *slog.Logger
}

func (c *AuditChainConfig) defaults() {
	if c.MaxBatch <= 0 {
		c.MaxBatch = 2048
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = 50
	}
	if c.AppendTimeout <= 0 {
		c.AppendTimeout = 10 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}

type chainItem struct {
	payload []byte
	md      eventstore.Metadata
	id      uuid.UUID
	done    chan chainResult
}

type chainResult struct {
	rec Recorded
	err error
}

// AuditChain is the sequencer of the audit chain: Record queues an entry;
// Run takes everything queued, links it onto the chain's head (link 2:
// hash = SHA-256(prev ‖ SHA-256(payload)), see audit.Link) and appends it in one append to the chain's
// stream with the exact expected version, so the chain stays linear even
// with several gateway processes: the loser of a race re-reads the head,
// re-links its batch and appends again. Record returns once the entry is
// durably committed. Safe for concurrent use.
type AuditChain struct {
	store eventstore.Store
	cfg   AuditChainConfig
	queue chan *chainItem

	// The chain's head as this process last saw it (owned by Run).
	headKnown bool
	headSeq   int64 // -1: empty chain
	headHash  string
}

// NewAuditChain returns a sequencer appending to store. Nothing is
// appended until Run.
func NewAuditChain(store eventstore.Store, cfg AuditChainConfig) (*AuditChain, error) {
	if store == nil {
		return nil, errors.New("audit chain: nil event store")
	}
	cfg.defaults()
	return &AuditChain{store: store, cfg: cfg, queue: make(chan *chainItem, 4*cfg.MaxBatch)}, nil
}

// errChainStopped is returned for entries queued when Run has stopped.
var errChainStopped = &domain.Error{Kind: domain.ErrUnavailable, Code: "audit_chain_stopped", Message: "the audit chain is not accepting entries (shutting down)"}

// Record appends the completion to the chain and returns its hash and
// position once committed. If ctx ends first the entry may still be
// committed.
func (c *AuditChain) Record(ctx context.Context, cmd RecordCompletion) (Recorded, error) {
	payload, err := audit.Canonical(cmd.Completion)
	if err != nil {
		return Recorded{}, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return Recorded{}, err
	}
	it := &chainItem{payload: payload, md: cmd.Metadata, id: id, done: make(chan chainResult, 1)}
	select {
	case c.queue <- it:
	case <-ctx.Done():
		return Recorded{}, fmt.Errorf("recording completion: %w", ctx.Err())
	}
	select {
	case r := <-it.done:
		return r.rec, r.err
	case <-ctx.Done():
		return Recorded{}, fmt.Errorf("recording completion: %w (it may still be committed)", ctx.Err())
	}
}

// Run sequences entries until ctx ends, then appends what is still queued
// (bounded by AppendTimeout per batch) and returns nil.
func (c *AuditChain) Run(ctx context.Context) error {
	for {
		var first *chainItem
		select {
		case first = <-c.queue:
		case <-ctx.Done():
			c.drain()
			return nil
		}
		c.appendBatch(c.collect(first))
	}
}

func (c *AuditChain) collect(first *chainItem) []*chainItem {
	batch := []*chainItem{first}
	for len(batch) < c.cfg.MaxBatch {
		select {
		case it := <-c.queue:
			batch = append(batch, it)
		default:
			return batch
		}
	}
	return batch
}

func (c *AuditChain) drain() {
	for {
		select {
		case it := <-c.queue:
			c.appendBatch(c.collect(it))
		default:
			return
		}
	}
}

// appendBatch links and appends one batch, retrying on conflicts and
// failures; every item gets its result.
func (c *AuditChain) appendBatch(batch []*chainItem) {
	var err error
	for attempt := 1; attempt <= c.cfg.MaxAttempts; attempt++ {
		var recs []Recorded
		recs, err = c.try(batch)
		if err == nil {
			for i, it := range batch {
				it.done <- chainResult{rec: recs[i]}
			}
			return
		}
		c.headKnown = false
		if !errors.Is(err, domain.ErrConcurrency) {
			c.cfg.Logger.Warn("audit chain append failed; retrying", "entries", len(batch), "attempt", attempt, "err", err)
			time.Sleep(min(time.Duration(attempt)*50*time.Millisecond, time.Second))
		}
	}
	c.cfg.Logger.Error("audit chain append failed: the completions were not recorded and their requests fail", "entries", len(batch), "err", err)
	for _, it := range batch {
		it.done <- chainResult{err: fmt.Errorf("recording completion in the audit chain: %w", errors.Join(domain.ErrUnavailable, err))}
	}
}

func (c *AuditChain) try(batch []*chainItem) ([]Recorded, error) {
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.AppendTimeout)
	defer cancel()
	if !c.headKnown {
		if recs, done, err := c.loadHead(ctx, batch); err != nil || done {
			return recs, err
		}
	}
	recs := make([]Recorded, len(batch))
	evs := make([]eventstore.NewEvent, len(batch))
	prev, seq := c.headHash, uint64(c.headSeq+1)
	for i, it := range batch {
		e, err := audit.Link(seq+uint64(i), prev, it.payload)
		if err != nil {
			return nil, err
		}
		data, err := json.Marshal(e)
		if err != nil {
			return nil, err
		}
		evs[i] = eventstore.NewEvent{ID: it.id, Type: e.EventType(), SchemaVersion: e.SchemaVersion(), Data: data, Metadata: it.md}
		recs[i] = Recorded{Hash: e.Hash, PrevHash: prev, Seq: e.Seq}
		prev = e.Hash
	}
	res, err := c.store.Append(ctx, audit.StreamID, eventstore.AfterVersion(c.headSeq), evs...)
	if err != nil {
		return nil, fmt.Errorf("appending %d audit entries: %w", len(batch), err)
	}
	for i := range recs {
		recs[i].Position = res.FirstPosition + uint64(i)
	}
	c.headSeq += int64(len(batch))
	c.headHash = prev
	return recs, nil
}

// loadHead reads the chain's head. If the batch's own events are already
// at the head (an earlier attempt committed after all), it returns their
// results with done=true.
func (c *AuditChain) loadHead(ctx context.Context, batch []*chainItem) ([]Recorded, bool, error) {
	evs, err := c.store.ReadStream(ctx, audit.StreamID, eventstore.ReadStreamOptions{Backward: true, FromEnd: true, Limit: len(batch)})
	if err != nil {
		return nil, false, fmt.Errorf("reading the audit chain's head: %w", err)
	}
	if len(evs) == 0 {
		c.headKnown, c.headSeq, c.headHash = true, -1, audit.Genesis
		return nil, false, nil
	}
	var head audit.CompletionRecorded
	if err := json.Unmarshal(evs[0].Data, &head); err != nil {
		return nil, false, fmt.Errorf("decoding the audit chain's head: %w", err)
	}
	c.headKnown, c.headSeq, c.headHash = true, int64(evs[0].StreamVersion), head.Hash
	if len(evs) == len(batch) && evs[0].ID == batch[len(batch)-1].id {
		recs := make([]Recorded, len(batch))
		for i := range batch {
			e := evs[len(evs)-1-i]
			if e.ID != batch[i].id {
				return nil, false, nil
			}
			var r audit.CompletionRecorded
			if err := json.Unmarshal(e.Data, &r); err != nil {
				return nil, false, err
			}
			recs[i] = Recorded{Hash: r.Hash, PrevHash: r.PrevHash, Seq: r.Seq, Position: e.Position}
		}
		return recs, true, nil
	}
	return nil, false, nil
}
