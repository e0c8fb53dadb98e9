package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/eventstore/postgres"
	"github.com/arr-dev/arr/eventstore/signedlog"
	"github.com/arr-dev/arr/eventstore/transparency"
	"github.com/arr-dev/arr/eventstore/transparency/verifier"
)

// headJSON is a signed head as the CLI prints it (and as GET /v1/log/head
// serves it).
type headJSON struct {
	Origin      string `json:"origin"`
	Size        uint64 `json:"tree_size"`
	RootHash    []byte `json:"root_hash"`
	Timestamp   string `json:"timestamp"`
	TimestampMS int64  `json:"timestamp_ms"`
	Checkpoint  string `json:"checkpoint"`
	VerifierKey string `json:"verifier_key"`
}

func headOut(h eventstore.SignedHead) headJSON {
	return headJSON{Origin: h.Origin, Size: h.Size, RootHash: h.Root[:], TimestampMS: h.Timestamp,
		Timestamp:  time.UnixMilli(h.Timestamp).UTC().Format("2006-01-02T15:04:05.000Z07:00"),
		Checkpoint: string(h.Checkpoint), VerifierKey: h.VerifierKey}
}

func (a *cli) eventsCheckpointCmd() *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "checkpoint [--json]",
		Short: "Sign a tree head of the event log now and print it (a signed checkpoint to keep elsewhere)",
		Long: "Sign a head of the event log's Merkle tree now (size, root hash, time; a C2SP checkpoint signed with\n" +
			"ARR_LOG_SIGNING_KEY or ARR_DATA_DIR/" + logKeyFile + "), keep it, and print it. If the latest kept head is of the\n" +
			"current size already, that head is printed. Save the checkpoint text somewhere arr cannot change it;\n" +
			"`arr events verify --head FILE` checks the log against it later.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := a.open(cmd, openOptions{signingKey: true})
			if err != nil {
				return err
			}
			defer s.Close()
			signer, err := s.logSigner(s.log)
			if err != nil {
				return err
			}
			h, fresh, err := signer.Sign(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), map[string]any{"head": headOut(h), "new": fresh})
			}
			w := cmd.OutOrStdout()
			if fresh {
				fmt.Fprintf(w, "signed the head of %d events, root %x, at %s\n", h.Size, h.Root, headOut(h).Timestamp)
			} else {
				fmt.Fprintf(w, "no events since the head of %d events signed at %s; it is:\n", h.Size, headOut(h).Timestamp)
			}
			fmt.Fprintf(w, "verifier key: %s\n\n%s", h.VerifierKey, h.Checkpoint)
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the head as JSON")
	return c
}

func (a *cli) eventsVerifyCmd() *cobra.Command {
	var headFile, vkey string
	var from uint64
	var asJSON, allowUnsigned bool
	c := &cobra.Command{
		Use:   "verify [--head FILE] [--from POS] [--key VERIFIER_KEY] [--allow-unsigned] [--json]",
		Short: "Check the event log against its Merkle tree and signed heads; name the first event altered, inserted or removed (exit 1)",
		Long: "Read every event (from --from on), recompute its leaf hash from its content (docs/transparency.md) and the\n" +
			"Merkle tree from the leaves, and check in position order: positions follow one another, each event's\n" +
			"stored leaf hash is its content's, each stored tree node is the recomputed one, and at the size of each\n" +
			"signed head the root is the signed one. The heads are the log's kept heads (those disowned with\n" +
			"`arr events disown-heads` aside) and, with --head, a signed checkpoint an auditor kept elsewhere (the\n" +
			"checkpoint text, or the JSON of GET /v1/log/head); their signatures are checked with --key (a note verifier\n" +
			"key), else the log's public key as the database records it (no secret key needed), else the public half of\n" +
			"ARR_LOG_SIGNING_KEY or ARR_DATA_DIR/" + logKeyFile + " when the database records none yet.\n" +
			"A kept head that the log's key did not sign is named with its key's fingerprint and the log's.\n" +
			"Exit status 0: the log verifies against at least one signature; 1: it does not, and the first bad position\n" +
			"(or, when leaf hashes and tree were rewritten to match, the range between signed heads) is named, or no\n" +
			"signature could be checked (--allow-unsigned accepts a check of the tree alone).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := a.open(cmd, openOptions{})
			if err != nil {
				return err
			}
			defer s.Close()
			st, err := s.merkleStore()
			if err != nil {
				return err
			}
			k, err := verifyKey(cmd.Context(), a.cfg, vkey, s)
			if err != nil {
				return err
			}
			heads, notes, badHead, kept, err := verifyHeads(cmd.Context(), st, k, headFile)
			if err != nil {
				return err
			}
			p := newProgress(os.Stderr, "verify")
			rep, err := signedlog.Verify(cmd.Context(), st, signedlog.VerifyOptions{From: from, Heads: heads, Progress: p.Set})
			if err != nil {
				return err
			}
			p.done = rep.Checked
			p.Finish()
			if rep.OK && badHead != nil {
				rep.OK, rep.Problem = false, badHead
			}
			var unsigned error
			if rep.OK && len(rep.HeadsMatched) == 0 && !allowUnsigned {
				unsigned = errNoSignature{why: noSignatureWhy(k, kept, headFile)}
				notes = append(notes, unsigned.Error())
			}
			if asJSON {
				if err := printJSON(cmd.OutOrStdout(), map[string]any{"report": rep, "notes": notes, "key": k.out(), "signatures_checked": len(rep.HeadsMatched)}); err != nil {
					return err
				}
			} else {
				printVerify(cmd.OutOrStdout(), rep, notes)
			}
			if !rep.OK {
				return errLogBroken{rep.Problem}
			}
			return unsigned
		},
	}
	c.Flags().StringVar(&headFile, "head", "", "a signed checkpoint kept elsewhere (its text, or the JSON of GET /v1/log/head) to check the log against")
	c.Flags().Uint64Var(&from, "from", 0, "start at this position (the tree before it is taken from the store)")
	c.Flags().StringVar(&vkey, "key", "", "the log's note verifier key (origin+keyid+base64), to check signatures with instead of the key the database records")
	c.Flags().BoolVar(&allowUnsigned, "allow-unsigned", false, "exit 0 when the tree verifies although no signature could be checked (no key, or no signed head covers the range)")
	c.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return c
}

// verifyHeads are the heads verify checks the log against — the one in
// headFile, if given, and the log's kept heads that k signed — with notes
// for the report, the first kept head another key signed, and how many
// heads the log keeps.
func verifyHeads(ctx context.Context, st *postgres.Store, k logKey, headFile string) (heads []verifier.Head, notes []string, badHead *signedlog.Problem, nKept int, err error) {
	if k.note != "" {
		notes = append(notes, k.note)
	}
	if headFile != "" {
		if k.pub == nil {
			return nil, nil, nil, 0, errors.New("--head: no key to check its signature with: give --key (the log's verifier key)")
		}
		h, err := readHeadFile(headFile, k.name, k.pub)
		if err != nil {
			return nil, nil, nil, 0, err
		}
		heads = append(heads, h)
	}
	kept, err := st.AllHeads(ctx, 0, 1<<63-1)
	if err != nil {
		return nil, nil, nil, 0, err
	}
	if k.pub == nil && len(kept) > 0 {
		notes = append(notes, fmt.Sprintf("the log's %d kept heads were not used: no key to check their signatures (give --key)", len(kept)))
	} else if k.pub != nil {
		var own []verifier.Head
		own, badHead = checkKeptHeads(kept, k)
		heads = append(heads, own...)
	}
	disowned, err := st.DisownedHeads(ctx)
	if err != nil {
		return nil, nil, nil, 0, err
	}
	for _, d := range disowned {
		notes = append(notes, fmt.Sprintf("the kept head of size %d (key %s) was disowned at %s by %s (event at position %d): %s; it is not used",
			d.Size, d.KeyFingerprint, d.DisownedAt.Format(time.RFC3339), d.DisownedBy, d.EventPosition, d.Reason))
	}
	return heads, notes, badHead, len(kept), nil
}

// logKey is the key heads are checked with, and where it came from.
type logKey struct {
	name string
	pub  ed25519.PublicKey
	// fingerprint is pub's; from says where pub came from.
	fingerprint, from string
	// note is what the report should say about it ("" for nothing).
	note string
}

func (k logKey) out() map[string]string {
	if k.pub == nil {
		return nil
	}
	return map[string]string{"fingerprint": k.fingerprint, "from": k.from}
}

// verifyKey is the key heads are checked with: --key, else the log's
// public key as the database records it, else (none recorded) the public
// half of the configured signing key, never making one. pub is nil when
// there is none.
func verifyKey(ctx context.Context, cfg Config, vkey string, s *system) (logKey, error) {
	recorded, rec, ok, err := s.recordedLogKey(ctx)
	if err != nil {
		return logKey{}, err
	}
	if vkey != "" {
		name, pub, err := verifier.ParseVerifierKey(vkey)
		if err != nil {
			return logKey{}, fmt.Errorf("--key: %w", err)
		}
		k := logKey{name: name, pub: pub, fingerprint: transparency.KeyFingerprint(pub), from: "--key"}
		if ok && rec.Fingerprint != k.fingerprint {
			k.note = fmt.Sprintf("--key has fingerprint %s, but the database records the log's key as %s (recorded %s by %s)",
				k.fingerprint, rec.Fingerprint, rec.CreatedAt.Format(time.RFC3339), rec.CreatedBy)
		}
		return k, nil
	}
	if ok {
		return logKey{name: cfg.LogOrigin, pub: recorded, fingerprint: rec.Fingerprint,
			from: fmt.Sprintf("the database's record (recorded %s by %s)", rec.CreatedAt.Format(time.RFC3339), rec.CreatedBy)}, nil
	}
	priv, err := configuredLogKey(cfg)
	if err != nil || priv == nil {
		return logKey{}, err
	}
	pub := priv.Public().(ed25519.PublicKey)
	return logKey{name: cfg.LogOrigin, pub: pub, fingerprint: transparency.KeyFingerprint(pub), from: "the configured signing key",
		note: "the database records no signing key for this log yet: the heads were checked with the configured signing key's public half"}, nil
}

// checkKeptHeads returns the kept heads the log's key signed and, for the
// first one it did not, the problem: a head genuinely signed by another
// key is named with both fingerprints and what to do about it.
func checkKeptHeads(kept []eventstore.SignedHead, k logKey) ([]verifier.Head, *signedlog.Problem) {
	var own []verifier.Head
	var bad *signedlog.Problem
	others := 0
	for _, h := range kept {
		opened, hk := signedlog.CheckHeadKey(h, k.name, k.pub)
		if hk.Log {
			own = append(own, opened)
			continue
		}
		if bad != nil {
			others++
			continue
		}
		msg := fmt.Sprintf("the kept head of size %d does not verify under %s (key %s): it was not signed by the log's key (%v)", h.Size, k.name, k.fingerprint, hk.Err)
		if hk.Signed && hk.Fingerprint != k.fingerprint {
			msg = fmt.Sprintf("the kept head of size %d is signed by key %s, not by the log's key %s (from %s): a process with another signing key signed it "+
				"(before arr bound the log's key to the database, e.g. `arr events checkpoint` run with another ARR_DATA_DIR), and GET /v1/log/head may have served it. "+
				"If no one you trust signed it with that key, it is not the log's: `arr events disown-heads --reason TEXT` records that in the log, stops serving and using it, "+
				"and signs a new head with the log's key; give auditors who kept it the new head", h.Size, hk.Fingerprint, k.fingerprint, k.from)
		}
		bad = &signedlog.Problem{Kind: signedlog.Unsigned, Upto: h.Size, Message: msg}
	}
	if others > 0 {
		bad.Message += fmt.Sprintf(" (%d more kept heads do not verify under the log's key)", others)
	}
	return own, bad
}

// errNoSignature makes arr exit with status 1 when the tree verified but
// no signature could be checked.
type errNoSignature struct{ why string }

func (e errNoSignature) Error() string {
	return "no signature was checked (" + e.why + "): the tree alone proves nothing against someone who rewrote events, leaf hashes and tree together; " +
		"give --key VERIFIER_KEY or --head FILE, or let arr sign a head (arr events checkpoint); --allow-unsigned accepts a check of the tree alone"
}

func noSignatureWhy(k logKey, kept int, headFile string) string {
	switch {
	case k.pub == nil:
		return "no key: the database records no signing key for this log and none is configured"
	case kept == 0 && headFile == "":
		return "the log has no signed head"
	default:
		return "no signed head covers the positions checked"
	}
}

// readHeadFile reads and checks a signed checkpoint: its text, or a JSON
// object with a "checkpoint" field.
func readHeadFile(path, name string, pub ed25519.PublicKey) (verifier.Head, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return verifier.Head{}, fmt.Errorf("--head: %w", err)
	}
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '{' {
		var j struct {
			Checkpoint string `json:"checkpoint"`
			Head       *struct {
				Checkpoint string `json:"checkpoint"`
			} `json:"head"`
		}
		if err := json.Unmarshal(t, &j); err != nil {
			return verifier.Head{}, fmt.Errorf("--head %s: not a checkpoint nor JSON with one: %w", path, err)
		}
		if j.Checkpoint == "" && j.Head != nil {
			j.Checkpoint = j.Head.Checkpoint
		}
		b = []byte(j.Checkpoint)
	}
	h, err := verifier.OpenCheckpoint(b, name, pub)
	if err != nil {
		return verifier.Head{}, fmt.Errorf("--head %s: %w", path, err)
	}
	return h, nil
}

func printVerify(w io.Writer, rep signedlog.Report, notes []string) {
	for _, n := range notes {
		fmt.Fprintln(w, "note: "+n)
	}
	heads := "no signed head"
	if n := len(rep.HeadsMatched); n > 0 {
		heads = fmt.Sprintf("%d signed heads (sizes %d..%d)", n, rep.HeadsMatched[0], rep.HeadsMatched[n-1])
	}
	if rep.OK {
		fmt.Fprintf(w, "event log verifies: %d events checked (positions %d..%d), tree of %d leaves, root %s; matches %s\n",
			rep.Checked, rep.From, rep.To, rep.TreeSize, rep.Root, heads)
		if rep.NotInTree > 0 {
			fmt.Fprintf(w, "%d events after the tree's last leaf are not in the tree yet (the next append adds them)\n", rep.NotInTree)
		}
		return
	}
	p := rep.Problem
	if p.Position > 0 {
		fmt.Fprintf(w, "event log BROKEN at position %d (%s): %s\n", p.Position, p.Kind, p.Message)
	} else {
		fmt.Fprintf(w, "event log BROKEN between positions %d and %d (%s): %s\n", p.After+1, p.Upto, p.Kind, p.Message)
	}
	fmt.Fprintf(w, "%d events verified before it; %s matched\n", rep.Checked, heads)
}

// errLogBroken makes arr exit with status 1 after the report.
type errLogBroken struct{ p *signedlog.Problem }

func (e errLogBroken) Error() string {
	if e.p.Position > 0 {
		return fmt.Sprintf("event log broken at position %d (%s)", e.p.Position, e.p.Kind)
	}
	return fmt.Sprintf("event log broken between positions %d and %d (%s)", e.p.After+1, e.p.Upto, e.p.Kind)
}
