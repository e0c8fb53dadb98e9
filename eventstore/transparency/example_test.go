package transparency_test

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/arr-dev/arr/eventstore/transparency"
	"github.com/arr-dev/arr/eventstore/transparency/verifier"
)

// docPath is the auditor's document, whose worked example these values are.
const docPath = "../../docs/transparency.md"

func exampleEvent() verifier.Event {
	id, _ := hex.DecodeString("0190a3b4c5d67e8f9a0b1c2d3e4f5061")
	return verifier.Event{
		Position:      42,
		ID:            [16]byte(id),
		StreamID:      "key-7",
		StreamVersion: 3,
		Type:          "KeyIssued",
		SchemaVersion: 1,
		Data:          []byte(`{"a":1}`),
		Metadata:      []byte(`{}`),
		RecordedAt:    1700000000123456,
	}
}

// workedExample computes every value the document's worked example shows,
// by name.
func workedExample() (map[string]string, error) {
	out := map[string]string{}
	data, err := verifier.LeafData(exampleEvent())
	if err != nil {
		return nil, err
	}
	leaf := verifier.LeafHash(data)
	out["leaf data"] = hex.EncodeToString(data)
	out["leaf hash"] = hex.EncodeToString(leaf[:])

	ctx := context.Background()
	tree, store := transparency.NewTree(), transparency.NewMemStore()
	for _, l := range vectorLeaves {
		d, _ := hex.DecodeString(l)
		nodes, err := tree.Append(verifier.LeafHash(d))
		if err != nil {
			return nil, err
		}
		if err := store.Put(nodes); err != nil {
			return nil, err
		}
	}
	root := tree.Root()
	out["root 8"] = hex.EncodeToString(root[:])
	leaf5 := verifier.LeafHash([]byte{0x40, 0x41, 0x42, 0x43})
	out["leaf 5 hash"] = hex.EncodeToString(leaf5[:])
	incl, err := transparency.InclusionProof(ctx, store, 5, 8)
	if err != nil {
		return nil, err
	}
	for i, p := range incl {
		out[fmt.Sprintf("inclusion 5 of 8 [%d]", i)] = hex.EncodeToString(p)
	}
	// The verifier's steps for leaf 5 of 8.
	r1 := verifier.NodeHash(incl[0], leaf5[:]) // fn 5 is odd: the proof hash is the left sibling
	r2 := verifier.NodeHash(r1[:], incl[1])    // fn 2 is even and below sn 3: the right sibling
	r3 := verifier.NodeHash(incl[2], r2[:])    // fn 1 is odd: the left sibling
	if r3 != root {
		return nil, fmt.Errorf("the worked inclusion steps end at %x, not the root %x", r3, root)
	}
	out["inclusion step 1"] = hex.EncodeToString(r1[:])
	out["inclusion step 2"] = hex.EncodeToString(r2[:])
	out["inclusion step 3"] = hex.EncodeToString(r3[:])
	cons, err := transparency.ConsistencyProof(ctx, store, 6, 8)
	if err != nil {
		return nil, err
	}
	for i, p := range cons {
		out[fmt.Sprintf("consistency 6 to 8 [%d]", i)] = hex.EncodeToString(p)
	}
	root6, err := transparency.RootAt(ctx, store, 6)
	if err != nil {
		return nil, err
	}
	out["root 6"] = hex.EncodeToString(root6[:])

	priv := exampleKey()
	pub := priv.Public().(ed25519.PublicKey)
	out["public key"] = hex.EncodeToString(pub)
	vkey, err := verifier.VerifierKey("arr.example/log", pub)
	if err != nil {
		return nil, err
	}
	out["verifier key"] = vkey
	head := verifier.Head{Origin: "arr.example/log", Size: 8, Root: root, Timestamp: 1700000000123}
	text, err := head.Text()
	if err != nil {
		return nil, err
	}
	out["head text"] = string(text)
	sig, err := transparency.Sign(priv, head)
	if err != nil {
		return nil, err
	}
	out["signature"] = base64.StdEncoding.EncodeToString(sig)
	note, err := transparency.SignCheckpoint(priv, head)
	if err != nil {
		return nil, err
	}
	out["checkpoint"] = string(note)
	return out, nil
}

// TestDocWorkedExample keeps docs/transparency.md true: every value of its
// worked example must be the one arr computes.
func TestDocWorkedExample(t *testing.T) {
	doc, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	values, err := workedExample()
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range values {
		for _, line := range strings.Split(strings.TrimSuffix(v, "\n"), "\n") {
			if !strings.Contains(string(doc), line) {
				t.Errorf("%s: %s does not show %q", name, docPath, line)
			}
		}
	}
}

// Example_workedExample prints the values of the document's worked
// example, by name.
func Example_workedExample() {
	values, err := workedExample()
	if err != nil {
		fmt.Println(err)
		return
	}
	names := slices.Sorted(maps.Keys(values))
	for _, name := range names {
		fmt.Printf("%s:\n%s\n", name, strings.TrimSuffix(values[name], "\n"))
	}
	// Output:
	// checkpoint:
	// arr.example/log
	// 8
	// XcnaeacGWamtVZy3Ad7ZoqudgjqtL0lgz+Nw7/RgQyg=
	// timestamp-ms 1700000000123
	//
	// — arr.example/log 3dxR0vWKY6g/MbfqBrBsqtSAShdixYqLD9eQ5FbdanEvl5H9I5+ycWR0iY5VHpXBhuQTK2NkMjJnUAndrQofVEN5oA8=
	// consistency 6 to 8 [0]:
	// 0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a
	// consistency 6 to 8 [1]:
	// ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0
	// consistency 6 to 8 [2]:
	// d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7
	// head text:
	// arr.example/log
	// 8
	// XcnaeacGWamtVZy3Ad7ZoqudgjqtL0lgz+Nw7/RgQyg=
	// timestamp-ms 1700000000123
	// inclusion 5 of 8 [0]:
	// bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b
	// inclusion 5 of 8 [1]:
	// ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0
	// inclusion 5 of 8 [2]:
	// d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7
	// inclusion step 1:
	// 0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a
	// inclusion step 2:
	// 6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4
	// inclusion step 3:
	// 5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328
	// leaf 5 hash:
	// 4271a26be0d8a84f0bd54c8c302e7cb3a3b5d1fa6780a40bcce2873477dab658
	// leaf data:
	// 01000000000000002a0190a3b4c5d67e8f9a0b1c2d3e4f5061000000056b65792d370000000000000003000000094b657949737375656400000001000000077b2261223a317d000000027b7d00060a2418202240
	// leaf hash:
	// a93a9a69e9817565c66a163ab9551f38fefa4b83683cb5ce63257b124fee5ba2
	// public key:
	// 03a107bff3ce10be1d70dd18e74bc09967e4d6309ba50d5f1ddc8664125531b8
	// root 6:
	// 76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef
	// root 8:
	// 5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328
	// signature:
	// 9YpjqD8xt+oGsGyq1IBKF2LFiosP15DkVt1qcS+Xkf0jn7JxZHSJjlUelcGG5BMrY2QyMmdQCd2tCh9UQ3mgDw==
	// verifier key:
	// arr.example/log+dddc51d2+AQOhB7/zzhC+HXDdGOdLwJln5NYwm6UNXx3chmQSVTG4
}
