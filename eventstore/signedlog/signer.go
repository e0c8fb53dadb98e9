package signedlog

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/arr-dev/arr/domain/wait"
	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/eventstore/transparency"
	"github.com/arr-dev/arr/eventstore/transparency/verifier"
)

// SignerLog is the log a Signer signs heads of.
type SignerLog interface {
	TreeHead(ctx context.Context) (uint64, transparency.Hash, error)
	ReadNodes(ctx context.Context, ids []transparency.NodeID) ([]transparency.Hash, error)
	WaitForEvents(ctx context.Context, after uint64) error
}

// HeadKeeper keeps signed heads, one per tree size.
type HeadKeeper interface {
	SaveHead(ctx context.Context, h eventstore.SignedHead) (bool, error)
	LatestHead(ctx context.Context) (eventstore.SignedHead, bool, error)
	HeadAt(ctx context.Context, size uint64) (eventstore.SignedHead, bool, error)
}

// SignerConfig configures a Signer.
type SignerConfig struct {
	// Key is the log's Ed25519 signing key. Required.
	Key ed25519.PrivateKey
	// Origin names the log in its heads (verifier.CheckOrigin). Required.
	Origin string
	// Every signs a head once the tree has grown by this many leaves
	// since the last one. Default 1000.
	Every uint64
	// Interval signs a head of a tree that has grown at all once this long
	// has passed since the last one. Default 30s.
	Interval time.Duration
	// Now is the clock. Default time.Now.
	Now    func() time.Time
	Logger *slog.Logger
}

func (c *SignerConfig) setDefaults() {
	if c.Every == 0 {
		c.Every = 1000
	}
	if c.Interval == 0 {
		c.Interval = 30 * time.Second
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}

// Validate reports every problem of the configuration.
func (c SignerConfig) Validate() error {
	var errs []error
	if len(c.Key) != ed25519.PrivateKeySize {
		errs = append(errs, fmt.Errorf("the log's signing key is %d bytes, want an Ed25519 private key of %d", len(c.Key), ed25519.PrivateKeySize))
	}
	if err := verifier.CheckOrigin(c.Origin); err != nil {
		errs = append(errs, fmt.Errorf("the log's origin: %w", err))
	}
	if c.Interval < 0 {
		errs = append(errs, fmt.Errorf("the checkpoint interval %s is negative", c.Interval))
	}
	return errors.Join(errs...)
}

// Signer signs tree heads: every Every leaves or Interval (Run) and on
// demand (Sign). It never signs two roots for one size, nor a head the
// kept heads' tree does not extend. Safe for concurrent use; several
// signers (processes) may share one log, each head is kept once.
type Signer struct {
	log   SignerLog
	heads HeadKeeper
	cfg   SignerConfig
	vkey  string
}

// NewSigner returns a Signer of log's heads, kept in heads.
func NewSigner(log SignerLog, heads HeadKeeper, cfg SignerConfig) (*Signer, error) {
	if log == nil || heads == nil {
		return nil, errors.New("signed log: a signer needs a log and a head keeper")
	}
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	vkey, err := verifier.VerifierKey(cfg.Origin, cfg.Key.Public().(ed25519.PublicKey))
	if err != nil {
		return nil, err
	}
	return &Signer{log: log, heads: heads, cfg: cfg, vkey: vkey}, nil
}

// VerifierKey is the note verifier key auditors check the heads with.
func (s *Signer) VerifierKey() string { return s.vkey }

// ErrInconsistent is what Sign wraps when the committed tree does not
// extend the latest kept head: the log was changed after that head was
// signed, and no head is signed over it.
var ErrInconsistent = errors.New("the log's tree does not extend its latest signed head")

// Sign signs a head of the committed tree now, unless the latest kept head
// is of its size already; fresh says which. Before signing it checks that
// the tree extends the latest kept head (a consistency proof from the
// store's nodes).
func (s *Signer) Sign(ctx context.Context) (h eventstore.SignedHead, fresh bool, err error) {
	size, root, err := s.log.TreeHead(ctx)
	if err != nil {
		return h, false, err
	}
	latest, ok, err := s.heads.LatestHead(ctx)
	if err != nil {
		return h, false, err
	}
	ts := s.cfg.Now().UnixMilli()
	if ok {
		if err := s.extends(ctx, latest, size, root); err != nil {
			return h, false, err
		}
		if latest.Size == size {
			return latest, false, nil
		}
		ts = max(ts, latest.Timestamp) // heads' times never go back
	}
	head := verifier.Head{Origin: s.cfg.Origin, Size: size, Root: root, Timestamp: ts}
	note, err := transparency.SignCheckpoint(s.cfg.Key, head)
	if err != nil {
		return h, false, err
	}
	h = eventstore.SignedHead{Head: head, Checkpoint: note, VerifierKey: s.vkey}
	saved, err := s.heads.SaveHead(ctx, h)
	if err != nil {
		return h, false, err
	}
	if !saved { // another signer kept one of this size first
		other, ok, err := s.heads.HeadAt(ctx, size)
		if err != nil || !ok {
			return h, false, fmt.Errorf("reading the signed head of size %d: %w", size, errors.Join(err, errors.New("not found")))
		}
		if other.Root != root {
			return other, false, fmt.Errorf("%w: the kept head of size %d has root %x, the tree %x", ErrInconsistent, size, other.Root, root)
		}
		return other, false, nil
	}
	return h, true, nil
}

// extends checks that the tree of size leaves with root extends the kept
// head.
func (s *Signer) extends(ctx context.Context, kept eventstore.SignedHead, size uint64, root transparency.Hash) error {
	if size < kept.Size {
		return fmt.Errorf("%w: the tree has %d leaves, the head of %s signed %d", ErrInconsistent, size, time.UnixMilli(kept.Timestamp).UTC().Format(time.RFC3339), kept.Size)
	}
	proof, err := transparency.ConsistencyProof(ctx, s.log, kept.Size, size)
	if err != nil {
		return fmt.Errorf("proving the tree extends the head of size %d: %w", kept.Size, err)
	}
	if err := verifier.VerifyConsistency(kept.Size, size, kept.Root[:], root[:], proof); err != nil {
		return fmt.Errorf("%w of size %d: %w (run `arr events verify`)", ErrInconsistent, kept.Size, err)
	}
	return nil
}

// Run signs heads until ctx ends: once the tree has grown by Every leaves
// since the latest kept head, or has grown at all and Interval has passed
// since that head. Failures are logged and retried; it returns nil when
// ctx ends.
func (s *Signer) Run(ctx context.Context) error {
	backoff := time.Second
	for ctx.Err() == nil {
		pause, err := s.step(ctx)
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			s.cfg.Logger.Error("signing a tree head", "err", err, "retry_in", backoff)
			wait.Sleep(ctx, backoff)
			backoff = min(backoff*2, s.cfg.Interval, time.Minute)
			continue
		}
		backoff = time.Second
		if pause != nil {
			pause()
		}
	}
	return nil
}

// step signs a head if one is due, or returns how to wait for the next.
func (s *Signer) step(ctx context.Context) (func(), error) {
	latest, ok, err := s.heads.LatestHead(ctx)
	if err != nil {
		return nil, err
	}
	size, _, err := s.log.TreeHead(ctx)
	if err != nil {
		return nil, err
	}
	now := s.cfg.Now()
	due := !ok
	var deadline time.Time
	if ok {
		deadline = time.UnixMilli(latest.Timestamp).Add(s.cfg.Interval)
		due = size >= latest.Size+s.cfg.Every || (size > latest.Size && !now.Before(deadline))
	}
	if due {
		h, fresh, err := s.Sign(ctx)
		if err == nil && fresh {
			s.cfg.Logger.Debug("signed a tree head", "size", h.Size, "root", fmt.Sprintf("%x", h.Root))
		}
		return nil, err
	}
	return func() {
		// Wake at Every leaves past the head, or at the deadline once the
		// tree has grown, whichever comes first.
		wctx, cancel := context.WithDeadline(ctx, deadline)
		defer cancel()
		target := latest.Size + s.cfg.Every - 1
		if size > latest.Size {
			_ = s.log.WaitForEvents(wctx, target)
			return
		}
		// Nothing new since the head: wait for an event first.
		if err := s.log.WaitForEvents(ctx, size); err != nil {
			return
		}
		_ = s.log.WaitForEvents(wctx, target)
	}, nil
}
