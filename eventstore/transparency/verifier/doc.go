// Package verifier checks arr's tamper-evident event log without trusting
// arr: it imports the Go standard library only, so an auditor can read it
// in one sitting, vendor it, or reimplement it from this comment alone.
//
// # Merkle tree
//
// The log is an RFC 6962 (RFC 9162, section 2.1) Merkle tree over SHA-256.
// Leaf i is the i-th event appended to the tree, counting from 0.
//
//	leaf hash  = SHA-256(0x00 || leaf data)
//	node hash  = SHA-256(0x01 || left || right)
//	MTH({})    = SHA-256("")  (the empty tree)
//	MTH({d0})  = leaf hash of d0
//	MTH(D[n])  = node hash(MTH(D[0:k]), MTH(D[k:n])), k the largest power of
//	             two smaller than n
//
// VerifyInclusion and VerifyConsistency follow the verification algorithms
// of RFC 9162 sections 2.1.3.2 and 2.1.4.2 step by step; proofs are the
// RFC's PATH and PROOF lists of 32-byte hashes, nearest the leaves first.
// Every hash (leaf hash, proof element, root) must be exactly 32 bytes.
// Two choices the RFC leaves open: a consistency proof from size 0 is empty
// and root1 must be SHA-256("") (any tree extends the empty one); from
// size n to size n it is empty and the two roots must be equal.
//
// # Leaf data of an event
//
// LeafData encodes an arr event as the bytes hashed into its leaf. Integers
// are big-endian; a "string" is a uint32 byte length followed by the bytes.
// Fields in this order, nothing between them, nothing after the last:
//
//	uint8   format version, 1
//	uint64  position: the event's place in the whole log (the store's
//	        global sequence; it may skip numbers, the leaf index never does)
//	[16]    event id: the 16 bytes of its UUID, in RFC 9562 byte order
//	string  stream id (UTF-8)
//	uint64  stream version: the event's 0-based index in its stream
//	string  event type (UTF-8)
//	uint32  schema version of the event type
//	string  data: the event's JSON payload, byte for byte as the log returns it
//	string  metadata: the event's metadata JSON, byte for byte as the log
//	        returns it
//	int64   recorded time: microseconds since 1970-01-01T00:00:00Z (two's
//	        complement)
//
// # Tree heads (checkpoints)
//
// A tree head is signed as a C2SP tlog-checkpoint (c2sp.org/tlog-checkpoint)
// whose note text is exactly four lines, each ending in a newline (0x0A):
//
//	<origin>
//	<tree size, ASCII decimal, no leading zeros>
//	<root hash, standard base64 with padding (RFC 4648 section 4)>
//	timestamp-ms <Unix time in milliseconds, ASCII decimal, no leading zeros>
//
// The origin names the log; it is non-empty UTF-8 of at most 255 bytes
// without spaces, plus signs or control characters, so it is also the
// signature's key name. The
// signature is Ed25519 (RFC 8032) over the note text, all four lines and
// their newlines: VerifyHead checks such a raw 64-byte signature.
//
// A signed checkpoint, as served and stored, is a C2SP signed note: the note
// text, an empty line, then the line
//
//	— <origin> <base64(key id || signature)>
//
// starting with an em dash (U+2014) and a space, where key id is the first
// four bytes of SHA-256(origin || 0x0A || 0x01 || 32-byte public key). The
// public key is published as a note verifier key (VerifierKey):
// <origin>+<key id as 8 lowercase hex digits>+<base64(0x01 || public key)>.
// These are the formats of golang.org/x/mod/sumdb/note, so tools built for
// Go's checksum database and transparency-dev logs read them too.
//
// Every function here is pure and safe for concurrent use. None panics on
// any input: malformed proofs, hashes and keys are errors.
package verifier
