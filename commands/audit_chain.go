package commands

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/audit"
	"github.com/arr-dev/arr/domain/catalog"
	"github.com/arr-dev/arr/domain/wait"
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
	// MaxAttempts bounds the tries of one batch, conflicts with another
	// process (retried at once) included. Default 50.
	MaxAttempts int
	// MaxFailures bounds the tries of one batch that fail for another
	// reason than a conflict (a store that is down, slow or refusing).
	// Default 5.
	MaxFailures int
	// RetryBackoff is the wait after the first failure of a batch; it
	// doubles after each, up to MaxBackoff. Defaults 50ms and 2s. The wait
	// ends early when Run's context ends.
	RetryBackoff, MaxBackoff time.Duration
	// AppendTimeout bounds one try (reading the head and appending).
	// Default 10s.
	AppendTimeout time.Duration
	Logger        *slog.Logger
}

// Validate fills in the defaults of the settings left zero and reports
// every setting that is out of range at once.
func (c *AuditChainConfig) Validate() error {
	var errs []error
	for _, f := range []struct {
		name string
		v    int64
	}{{"MaxBatch", int64(c.MaxBatch)}, {"MaxAttempts", int64(c.MaxAttempts)}, {"MaxFailures", int64(c.MaxFailures)},
		{"RetryBackoff", int64(c.RetryBackoff)}, {"MaxBackoff", int64(c.MaxBackoff)}, {"AppendTimeout", int64(c.AppendTimeout)}} {
		if f.v < 0 {
			errs = append(errs, fmt.Errorf("audit chain: %s is negative (%d); leave it zero for the default", f.name, f.v))
		}
	}
	if c.MaxBatch == 0 {
		c.MaxBatch = 2048
	}
	if c.MaxAttempts == 0 {
		c.MaxAttempts = 50
	}
	if c.MaxFailures == 0 {
		c.MaxFailures = 5
	}
	if c.RetryBackoff == 0 {
		c.RetryBackoff = 50 * time.Millisecond
	}
	if c.MaxBackoff == 0 {
		c.MaxBackoff = max(2*time.Second, c.RetryBackoff)
	}
	if c.MaxBackoff > 0 && c.RetryBackoff > 0 && c.MaxBackoff < c.RetryBackoff {
		errs = append(errs, fmt.Errorf("audit chain: MaxBackoff (%s) is below RetryBackoff (%s)", c.MaxBackoff, c.RetryBackoff))
	}
	if c.AppendTimeout == 0 {
		c.AppendTimeout = 10 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return errors.Join(errs...)
}

// The states of a queued entry. An entry is queued until Run takes it
// into a batch (sent: from then on the store may commit it), unless its
// caller withdraws it first (withdrawn: it is never appended).
const (
	itemQueued int32 = iota
	itemSent
	itemWithdrawn
)

type chainItem struct {
	payload []byte
	md      eventstore.Metadata
	id      uuid.UUID
	state   atomic.Int32
	done    chan chainResult
}

type chainResult struct {
	rec Recorded
	err error
}

// AuditChain is the sequencer of the audit chain: Record queues an entry;
// Run takes everything queued, links it onto the chain's head (link 2:
// hash = SHA-256(prev ‖ SHA-256(payload)), see audit.Link) and appends it in
// one append to the chain's stream with the exact expected version, so the
// chain stays linear even with several gateway processes: the loser of a
// race re-reads the head, re-links its batch and appends again.
//
// What Record returns is the truth about the chain: Recorded once the
// entry is committed; an error wrapping domain.ErrUnavailable when it is
// not in the chain and never will be; ErrOutcomeUnknown in the rare case
// that the chain cannot tell. Safe for concurrent use.
type AuditChain struct {
	store   Appender
	cfg     AuditChainConfig
	queue   chan *chainItem
	stopped chan struct{} // closed when Run returns
	running atomic.Bool

	// The chain's head as this process last saw it (owned by Run).
	headKnown bool
	headSeq   int64 // -1: empty chain
	headHash  string

	reg *domain.Registry // decodes the entries it reads back
}

// decodeEntry decodes an audit chain entry through the registry, at its
// current schema version.
func decodeEntry(reg *domain.Registry, e eventstore.Event) (*audit.CompletionRecorded, error) {
	return domain.DecodeAs[*audit.CompletionRecorded](reg, e.Type, e.SchemaVersion, e.Data)
}

// NewAuditChain returns a sequencer appending to store. Nothing is
// appended until Run.
func NewAuditChain(store Appender, cfg AuditChainConfig) (*AuditChain, error) {
	if store == nil {
		return nil, errors.New("audit chain: nil event store")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &AuditChain{store: store, cfg: cfg, queue: make(chan *chainItem, 4*cfg.MaxBatch), stopped: make(chan struct{}), reg: catalog.Registry()}, nil
}

// errChainStopped is returned for entries not appended because Run has
// stopped.
var errChainStopped = &domain.Error{Kind: domain.ErrUnavailable, Code: "audit_chain_stopped", Message: "the audit chain is not accepting entries (shutting down)"}

// ErrOutcomeUnknown is returned by Record when the entry was sent to the
// store but the store's answer never came (every try failed, or Run
// stopped meanwhile): the entry may be in the chain or not. A caller must
// tell its client neither that the completion failed nor that it
// succeeded.
var ErrOutcomeUnknown = errors.New("the audit entry was sent to the event store, whose answer never came: it may or may not be in the chain")

// Record appends the completion to the chain and returns its hash and
// position once committed.
//
// If ctx ends (or Run stops) while the entry is still queued, the entry is
// withdrawn — it will never be appended — and Record returns an error
// wrapping domain.ErrUnavailable. If Run has already sent it to the store,
// Record waits for the store's answer regardless of ctx: that wait is
// bounded by the chain (AppendTimeout per try, MaxAttempts and
// MaxFailures, and Run's context).
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
		return Recorded{}, notRecorded(ctx.Err())
	case <-c.stopped:
		return Recorded{}, errChainStopped
	}
	var why error
	select {
	case r := <-it.done:
		return r.rec, r.err
	case <-ctx.Done():
		why = ctx.Err()
	case <-c.stopped:
		why = errChainStopped
	}
	if it.state.CompareAndSwap(itemQueued, itemWithdrawn) {
		return Recorded{}, notRecorded(why)
	}
	r := <-it.done // sent: Run answers every entry it sent
	return r.rec, r.err
}

func notRecorded(why error) error {
	if errors.Is(why, domain.ErrUnavailable) {
		return fmt.Errorf("recording completion: not recorded: %w", why)
	}
	return fmt.Errorf("recording completion: not recorded: %w", errors.Join(domain.ErrUnavailable, why))
}

// Run sequences entries until ctx ends, then returns nil at once: entries
// still queued are withdrawn (their Record calls fail: they are never
// appended), and a batch being appended gets no further try — its entries
// fail as not recorded if no append of theirs reached the store, and with
// ErrOutcomeUnknown otherwise. Every wait of Run (an append, a retry's
// backoff) ends with ctx, so Run returns within moments of ctx ending; to
// record the completions answered during a shutdown, end ctx after the
// HTTP servers have drained. Run must be called once.
func (c *AuditChain) Run(ctx context.Context) error {
	if !c.running.CompareAndSwap(false, true) {
		return errors.New("audit chain: Run called twice")
	}
	defer close(c.stopped)
	for {
		var first *chainItem
		select {
		case first = <-c.queue:
		case <-ctx.Done():
			return nil
		}
		if batch := c.collect(first); len(batch) > 0 {
			c.appendBatch(ctx, batch)
		}
	}
}

// collect takes first and everything else queued, up to MaxBatch, into a
// batch, leaving out the entries withdrawn meanwhile.
func (c *AuditChain) collect(first *chainItem) []*chainItem {
	batch := make([]*chainItem, 0, 16)
	take := func(it *chainItem) {
		if it.state.CompareAndSwap(itemQueued, itemSent) {
			batch = append(batch, it)
		}
	}
	take(first)
	for len(batch) < c.cfg.MaxBatch {
		select {
		case it := <-c.queue:
			take(it)
		default:
			return batch
		}
	}
	return batch
}

// appendBatch links and appends one batch: a conflict (another process
// appended first) is retried at once, another failure after a backoff;
// every entry of the batch gets its result.
func (c *AuditChain) appendBatch(ctx context.Context, batch []*chainItem) {
	var err error
	sent := false // some try's append may have committed the batch
	failures, backoff := 0, c.cfg.RetryBackoff
	for attempt := 1; attempt <= c.cfg.MaxAttempts && ctx.Err() == nil; attempt++ {
		var recs []Recorded
		var appended bool
		recs, appended, err = c.try(ctx, batch)
		if err == nil {
			for i, it := range batch {
				it.done <- chainResult{rec: recs[i]}
			}
			return
		}
		c.headKnown = false
		// A conflict, or an error marked eventstore.ErrNotAppended, wrote
		// nothing; any other error of an append may hide a commit.
		sent = sent || appended && !errors.Is(err, domain.ErrConcurrency) && !errors.Is(err, eventstore.ErrNotAppended)
		if errors.Is(err, domain.ErrConcurrency) {
			continue
		}
		if failures++; failures >= c.cfg.MaxFailures {
			break
		}
		c.cfg.Logger.Warn("audit chain append failed; retrying", "entries", len(batch), "attempt", attempt, "err", err, "retry_in", backoff)
		if !wait.Sleep(ctx, backoff) {
			break
		}
		backoff = min(2*backoff, c.cfg.MaxBackoff)
	}
	if err == nil {
		err = ctx.Err()
	}
	if ctx.Err() != nil {
		err = errors.Join(errChainStopped, err)
	}
	result := fmt.Errorf("recording completion in the audit chain: not recorded: %w", errors.Join(domain.ErrUnavailable, err))
	if sent {
		c.cfg.Logger.Error("audit chain append failed and the store's answer never came: the completions may or may not be in the chain; their requests get no answer", "entries", len(batch), "err", err)
		result = fmt.Errorf("recording completion in the audit chain: %w (%v)", ErrOutcomeUnknown, err)
	} else {
		c.cfg.Logger.Error("audit chain append failed: the completions were not recorded and their requests fail", "entries", len(batch), "err", err)
	}
	for _, it := range batch {
		it.done <- chainResult{err: result}
	}
}

// try is one try at appending the batch; appended says whether it called
// the store's Append (which may commit even when it returns an error).
func (c *AuditChain) try(ctx context.Context, batch []*chainItem) (recs []Recorded, appended bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.AppendTimeout)
	defer cancel()
	if !c.headKnown {
		if recs, done, err := c.loadHead(ctx, batch); err != nil || done {
			return recs, false, err
		}
	}
	recs = make([]Recorded, len(batch))
	evs := make([]eventstore.NewEvent, len(batch))
	prev, seq := c.headHash, uint64(c.headSeq+1)
	for i, it := range batch {
		e, err := audit.Link(seq+uint64(i), prev, it.payload)
		if err != nil {
			return nil, false, err
		}
		data, err := json.Marshal(e)
		if err != nil {
			return nil, false, err
		}
		evs[i] = eventstore.NewEvent{ID: it.id, Type: e.EventType(), SchemaVersion: e.SchemaVersion(), Data: data, Metadata: it.md}
		recs[i] = Recorded{Hash: e.Hash, PrevHash: prev, Seq: e.Seq}
		prev = e.Hash
	}
	res, err := c.store.Append(ctx, audit.StreamID, eventstore.AfterVersion(c.headSeq), evs...)
	if err != nil {
		return nil, true, fmt.Errorf("appending %d audit entries: %w", len(batch), err)
	}
	if res.Duplicate {
		// An earlier try committed the batch after all, perhaps linked
		// onto another head than this try's: report what is stored.
		c.headKnown = false
		recs, err = c.readBack(ctx, res, batch)
		return recs, true, err
	}
	for i := range recs {
		recs[i].Position = res.FirstPosition + uint64(i)
	}
	c.headSeq += int64(len(batch))
	c.headHash = prev
	return recs, true, nil
}

// readBack reads the batch's entries as an earlier append stored them.
func (c *AuditChain) readBack(ctx context.Context, res eventstore.AppendResult, batch []*chainItem) ([]Recorded, error) {
	evs, err := c.store.ReadStream(ctx, audit.StreamID, eventstore.ReadStreamOptions{From: res.FirstVersion, Limit: len(batch)})
	if err != nil {
		return nil, fmt.Errorf("reading back audit entries already appended: %w", err)
	}
	if len(evs) != len(batch) {
		return nil, fmt.Errorf("reading back audit entries already appended: %d of %d found", len(evs), len(batch))
	}
	recs := make([]Recorded, len(batch))
	for i, e := range evs {
		if e.ID != batch[i].id {
			return nil, fmt.Errorf("reading back audit entries already appended: version %d holds event %s, not %s", e.StreamVersion, e.ID, batch[i].id)
		}
		r, err := decodeEntry(c.reg, e)
		if err != nil {
			return nil, err
		}
		recs[i] = Recorded{Hash: r.Hash, PrevHash: r.PrevHash, Seq: r.Seq, Position: e.Position}
	}
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
	head, err := decodeEntry(c.reg, evs[0])
	if err != nil {
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
			r, err := decodeEntry(c.reg, e)
			if err != nil {
				return nil, false, err
			}
			recs[i] = Recorded{Hash: r.Hash, PrevHash: r.PrevHash, Seq: r.Seq, Position: e.Position}
		}
		return recs, true, nil
	}
	return nil, false, nil
}
