package complete

import (
	"context"

	"github.com/arr-dev/arr/domain/guardrail"
)

// joinSeps are the ways texts are joined for guardrail.Engine.Joined: as
// they come (a word cut in two parts) and with a space (a number's groups
// in two messages).
var joinSeps = []string{"", " "}

// guardJoined runs the prompt's rules on the texts the upstream reads as
// one (after guardPrompt and guardTools): each message's texts together,
// and each run of consecutive user messages' texts together, so a card
// number or a denied word cut across parts or messages is seen. What
// crosses from one text into another refuses (a redacting rule's too:
// no one text holds its span) or is logged; a refusal is recorded and
// returned as guardPrompt's are.
func (h *Handler) guardJoined(ctx context.Context, k *call, requestID string) error {
	if k.guard == nil || !k.guard.Scans(guardrail.Prompt) || len(k.req.Fields["messages"]) == 0 {
		return nil
	}
	v, err := decodeMessages(k.req.Fields["messages"])
	if err != nil {
		return err
	}
	msgs, _ := v.([]any)
	for _, group := range joinedGroups(msgs) {
		for _, sep := range joinSeps {
			fired, refused := k.guard.Joined(group, sep, guardrail.Prompt)
			k.fire(fired...)
			if refused != nil {
				return h.refusePrompt(ctx, k, requestID, *refused)
			}
		}
	}
	return nil
}

// joinedGroups lists the texts of each message, and of each run of
// consecutive user messages (groups of one text are left out).
func joinedGroups(msgs []any) [][]string {
	var groups [][]string
	var run []string
	runLen := 0
	for _, m := range msgs {
		var texts []string
		walkTexts(m, false, func(s string) string { texts = append(texts, s); return s })
		if len(texts) > 1 {
			groups = append(groups, texts)
		}
		obj, _ := m.(map[string]any)
		if role, _ := obj["role"].(string); role == "user" {
			run, runLen = append(run, texts...), runLen+1
			continue
		}
		if runLen > 1 && len(run) > 1 {
			groups = append(groups, run)
		}
		run, runLen = nil, 0
	}
	if runLen > 1 && len(run) > 1 {
		groups = append(groups, run)
	}
	return groups
}
