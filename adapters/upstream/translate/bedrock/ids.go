package bedrock

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/arr-dev/arr/domain/chat"
)

// idMap maps a request's tool call ids to the toolUseIds sent for them
// (only those Converse does not take are in it).
type idMap map[string]string

// to is the toolUseId sent for the client's id.
func (m idMap) to(id string) string {
	if v, ok := m[id]; ok {
		return v
	}
	return id
}

// minIDHash is the shortest hash prefix (hex digits) of a made-up
// toolUseId: 64 bits, lengthened only on a collision.
const minIDHash = 16

// toolIDs maps every tool call id of msgs (an assistant's tool_calls, a
// tool message's tool_call_id) that is not a toolUseId Converse takes
// ([a-zA-Z0-9_-]{1,64}) to "t" and a prefix of its SHA-256 in hex, long
// enough to collide with no other id of the request: one to one, the
// same for a call and its result. It returns the map and its inverse
// (made-up id to the client's).
func toolIDs(msgs []chat.Message) (idMap, map[string]string, error) {
	var odd []string
	used, seen := map[string]bool{}, map[string]bool{}
	note := func(id string) {
		if seen[id] {
			return
		}
		seen[id] = true
		if toolName.MatchString(id) {
			used[id] = true
			return
		}
		odd = append(odd, id)
	}
	for _, m := range msgs {
		for _, tc := range m.ToolCalls {
			note(tc.ID)
		}
		if m.Role == "tool" && m.ToolCallID != "" {
			note(m.ToolCallID)
		}
	}
	if len(odd) == 0 {
		return nil, nil, nil
	}
	ids, back := idMap{}, map[string]string{}
	for _, id := range odd {
		sum := sha256.Sum256([]byte(id))
		h := hex.EncodeToString(sum[:])
		n := minIDHash
		for n < 63 && used["t"+h[:n]] {
			n++
		}
		made := "t" + h[:n]
		if used[made] {
			return nil, nil, invalid("tool call id %q: no toolUseId Converse takes that is not another id's", id)
		}
		used[made], ids[id], back[made] = true, made, id
	}
	return ids, back, nil
}
