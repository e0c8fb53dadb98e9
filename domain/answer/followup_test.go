package answer

import (
	"errors"
	"strings"
	"testing"

	"github.com/arr-dev/arr/domain"
)

func TestSalientPhrase(t *testing.T) {
	for q, want := range map[string]string{
		"How does the gateway's response cache work?":     "the gateway's response cache",
		"What does the gateway's response cache do?":      "the gateway's response cache",
		"Where does the island ferry leave from?":         "the island ferry",
		"What is the default size of the response cache?": "the default size of the response cache",
		"When was the north pier lighthouse built?":       "the north pier lighthouse built",
		"Tell me about pickle":                            "pickle",
		"How do I revoke an API key?":                     "an API key",
		"what is it?":                                     "",
		"":                                                "",
		"Why does bread rise?":                            "bread",
	} {
		if got := SalientPhrase(q); got != want {
			t.Errorf("SalientPhrase(%q) = %q, want %q", q, got, want)
		}
	}
}

func TestResolveFollowUp(t *testing.T) {
	conv := []Message{
		{Role: "user", Content: "How does the gateway's response cache work?"},
		{Role: "assistant", Content: "It keeps completions [1]."},
	}
	for q, want := range map[string]string{
		"How long does it keep them?":       "How long does the gateway's response cache keep them?",
		"Is it shared between keys?":        "Is the gateway's response cache shared between keys?",
		"What is its default size?":         "What is the gateway's response cache's default size?",
		"It is on by default?":              "The gateway's response cache is on by default?",
		"Can I turn this off?":              "Can I turn the gateway's response cache off?",
		"Does this cache expire?":           "Does this cache expire?", // "this" is a determiner here
		"And the default size?":             "And the default size of the gateway's response cache?",
		"Default TTL":                       "Default TTL of the gateway's response cache?",
		"What is a Fresnel lens?":           "What is a Fresnel lens?", // self-contained
		"How do I revoke an API key today?": "How do I revoke an API key today?",
	} {
		got, changed := ResolveFollowUp(q, conv)
		if got != want || changed != (got != q) {
			t.Errorf("ResolveFollowUp(%q) = %q, %v; want %q", q, got, changed, want)
		}
	}
	// The latest user turn is the one that counts.
	conv = append(conv, Message{Role: "user", Content: "Where does the island ferry leave from?"})
	if got, _ := ResolveFollowUp("When does it leave?", conv); got != "When does the island ferry leave?" {
		t.Errorf("latest turn: %q", got)
	}
	// A resolved question over MaxQuestionChars is not used.
	long := []Message{{Role: "user", Content: "How does the " + strings.Repeat("huge ", 100) + "cache work?"}}
	if got, changed := ResolveFollowUp("How long does it keep entries?", long); changed || got != "How long does it keep entries?" {
		t.Errorf("too long: %q", got)
	}
	// No user turn, or none with a subject: unchanged.
	for _, ms := range [][]Message{nil, {{Role: "assistant", Content: "The ferry leaves at nine."}}, {{Role: "user", Content: "what is it?"}}} {
		if got, changed := ResolveFollowUp("How long does it take?", ms); changed || got != "How long does it take?" {
			t.Errorf("%v: %q %v", ms, got, changed)
		}
	}
}

func TestCheckMessages(t *testing.T) {
	ok := []Message{{Role: "user", Content: "a"}, {Role: "assistant", Content: "b"}}
	if err := CheckMessages(ok); err != nil {
		t.Fatal(err)
	}
	many := make([]Message, MaxTurns+1)
	for i := range many {
		many[i] = Message{Role: "user", Content: "x"}
	}
	big := make([]Message, 6)
	for i := range big {
		big[i] = Message{Role: "user", Content: strings.Repeat("y", MaxMessageChars)}
	}
	for name, c := range map[string]struct {
		ms          []Message
		code, field string
	}{
		"too many":      {many, "messages_too_many", "messages"},
		"role":          {[]Message{ok[0], {Role: "system", Content: "x"}}, "messages_invalid_role", "messages[1].role"},
		"no role":       {[]Message{{Content: "x"}}, "messages_role_missing", "messages[0].role"},
		"empty":         {[]Message{{Role: "user", Content: " "}}, "messages_content_empty", "messages[0].content"},
		"long message":  {[]Message{{Role: "user", Content: strings.Repeat("z", MaxMessageChars+1)}}, "messages_too_long", "messages[0].content"},
		"long in total": {big, "messages_total_too_long", "messages"},
		"control":       {[]Message{{Role: "user", Content: "a\x00b"}}, "messages_control_character", "messages[0].content"},
	} {
		err := CheckMessages(c.ms)
		var de *domain.Error
		if !errors.As(err, &de) || !errors.Is(err, domain.ErrInvalid) || de.Field != c.field || de.Code != c.code {
			t.Errorf("%s: %v (%+v), want code %s field %s", name, err, de, c.code, c.field)
		}
	}
}

// TestAnswerSynthesizedV2DecodesAsV3: an answer recorded before snippets
// and conversations decodes through the registry with none; a version 3
// answer keeps its resolved question and conversation.
func TestAnswerSynthesizedV2DecodesAsV3(t *testing.T) {
	reg := domain.NewRegistry(Events())
	v2 := `{"answer_id":"0190a4b2-0000-7000-8000-000000000001","question":"How long does the ferry take?","answer":"Forty minutes [1].","sources":[{"title":"Ferry","url":"http://127.0.0.1/ferry","content":"The crossing takes forty minutes."}]}`
	ev, err := reg.Decode("AnswerSynthesized", 2, []byte(v2))
	if err != nil {
		t.Fatal(err)
	}
	a := ev.(*AnswerSynthesized)
	if a.ResolvedQuery != "" || a.Conversation != nil || a.Sources[0].Snippet != "" || a.Answer != "Forty minutes [1]." {
		t.Fatalf("%+v", a)
	}
	v3 := `{"question":"How long does it take?","resolved_query":"How long does the ferry take?","conversation":{"turns":2,"resolved_by":"extractive"},"sources":[{"title":"Ferry","url":"http://127.0.0.1/ferry","content":"c","snippet":"s"}]}`
	ev, err = reg.Decode("AnswerSynthesized", 3, []byte(v3))
	if err != nil {
		t.Fatal(err)
	}
	a = ev.(*AnswerSynthesized)
	if a.ResolvedQuery != "How long does the ferry take?" || a.Conversation == nil || *a.Conversation != (Conversation{Turns: 2, ResolvedBy: "extractive"}) || a.Sources[0].Snippet != "s" {
		t.Fatalf("%+v", a)
	}
	if _, err := reg.Decode("AnswerSynthesized", 5, []byte(v3)); err == nil {
		t.Fatal("version 5 decoded")
	}
}

// TestAnswerServedV1DecodesAsV2: a serving recorded before conversations
// decodes with none.
func TestAnswerServedV1DecodesAsV2(t *testing.T) {
	reg := domain.NewRegistry(Events())
	ev, err := reg.Decode("AnswerServed", 1, []byte(`{"cache_key":"k","cached":true}`))
	if err != nil {
		t.Fatal(err)
	}
	if s := ev.(*AnswerServed); s.ResolvedQuery != "" || s.Turns != 0 || !s.Cached {
		t.Fatalf("%+v", s)
	}
	ev, err = reg.Decode("AnswerServed", 2, []byte(`{"cache_key":"k","resolved_query":"How long does the ferry take?","turns":2}`))
	if err != nil {
		t.Fatal(err)
	}
	if s := ev.(*AnswerServed); s.ResolvedQuery != "How long does the ferry take?" || s.Turns != 2 {
		t.Fatalf("%+v", s)
	}
}
