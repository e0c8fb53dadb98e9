package main

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/eventstore/signedlog"
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
			s, err := a.open(cmd, openOptions{})
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
	var asJSON bool
	c := &cobra.Command{
		Use:   "verify [--head FILE] [--from POS] [--key VERIFIER_KEY] [--json]",
		Short: "Check the event log against its Merkle tree and signed heads; name the first event altered, inserted or removed (exit 1)",
		Long: "Read every event (from --from on), recompute its leaf hash from its content (docs/transparency.md) and the\n" +
			"Merkle tree from the leaves, and check in position order: positions follow one another, each event's\n" +
			"stored leaf hash is its content's, each stored tree node is the recomputed one, and at the size of each\n" +
			"signed head the root is the signed one. The heads are the log's kept heads and, with --head, a signed\n" +
			"checkpoint an auditor kept elsewhere (the checkpoint text, or the JSON of GET /v1/log/head); their\n" +
			"signatures are checked with --key (a note verifier key), else the public half of ARR_LOG_SIGNING_KEY or\n" +
			"ARR_DATA_DIR/" + logKeyFile + ".\n" +
			"Exit status 0: the log verifies; 1: it does not, and the first bad position (or, when leaf hashes and tree\n" +
			"were rewritten to match, the range between signed heads) is named.",
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
			name, pub, err := verifyKey(a.cfg, vkey, s)
			if err != nil {
				return err
			}
			var heads []verifier.Head
			var notes []string
			if headFile != "" {
				if pub == nil {
					return errors.New("--head: no key to check its signature with: give --key (the log's verifier key) or ARR_LOG_SIGNING_KEY")
				}
				h, err := readHeadFile(headFile, name, pub)
				if err != nil {
					return err
				}
				heads = append(heads, h)
			}
			kept, err := st.AllHeads(cmd.Context(), 0, 1<<63-1)
			if err != nil {
				return err
			}
			var badHead *signedlog.Problem
			switch {
			case pub == nil && len(kept) > 0:
				notes = append(notes, fmt.Sprintf("the log's %d kept heads were not used: no key to check their signatures (give --key or ARR_LOG_SIGNING_KEY)", len(kept)))
			case pub != nil:
				for _, k := range kept {
					h, err := verifier.OpenCheckpoint(k.Checkpoint, name, pub)
					if err != nil || h != k.Head {
						if badHead == nil {
							badHead = &signedlog.Problem{Kind: signedlog.Unsigned, Upto: k.Size,
								Message: fmt.Sprintf("the kept head of size %d does not verify under %s: it was not signed by the log's key (%v)", k.Size, name, err)}
						}
						continue
					}
					heads = append(heads, h)
				}
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
			if asJSON {
				if err := printJSON(cmd.OutOrStdout(), map[string]any{"report": rep, "notes": notes}); err != nil {
					return err
				}
			} else {
				printVerify(cmd.OutOrStdout(), rep, notes)
			}
			if !rep.OK {
				return errLogBroken{rep.Problem}
			}
			return nil
		},
	}
	c.Flags().StringVar(&headFile, "head", "", "a signed checkpoint kept elsewhere (its text, or the JSON of GET /v1/log/head) to check the log against")
	c.Flags().Uint64Var(&from, "from", 0, "start at this position (the tree before it is taken from the store)")
	c.Flags().StringVar(&vkey, "key", "", "the log's note verifier key (origin+keyid+base64), to check signatures with instead of the configured signing key's")
	c.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return c
}

// verifyKey is the key heads are checked with: --key, else the configured
// signing key's public half (never generating one); nil when there is none.
func verifyKey(cfg Config, vkey string, s *system) (string, ed25519.PublicKey, error) {
	if vkey != "" {
		name, pub, err := verifier.ParseVerifierKey(vkey)
		if err != nil {
			return "", nil, fmt.Errorf("--key: %w", err)
		}
		return name, pub, nil
	}
	priv, err := logSigningKey(cfg, false, s.log)
	if err != nil || priv == nil {
		return "", nil, err
	}
	return cfg.LogOrigin, priv.Public().(ed25519.PublicKey), nil
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
