package answer

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/text"
)

// Bounds of a conversation's earlier turns.
const (
	MaxTurns        = 20
	MaxMessageChars = 4000
	// MaxConversationChars bounds all the turns' content together.
	MaxConversationChars = 20000
)

// The roles of a conversation's turns.
const (
	UserRole      = "user"
	AssistantRole = "assistant"
)

// Message is one earlier turn of a conversation, OpenAI-style.
type Message struct {
	// Role is "user" or "assistant".
	Role string `json:"role"`
	// Content is the turn's text.
	Content string `json:"content"`
}

// CheckMessages validates the earlier turns a client sent: at most
// MaxTurns, each with the role user or assistant and a content of 1 to
// MaxMessageChars characters, MaxConversationChars in all. The error is a
// domain validation error whose field names the message
// ("messages[2].role").
func CheckMessages(ms []Message) error {
	if len(ms) > MaxTurns {
		return domain.Invalid("messages_too_many", "messages", "messages holds %d turns; at most %d earlier turns are allowed: send the latest ones", len(ms), MaxTurns)
	}
	total := 0
	for i, m := range ms {
		field := "messages[" + itoa(i) + "]"
		switch m.Role {
		case UserRole, AssistantRole:
		case "":
			return domain.Invalid("messages_role_missing", field+".role", "%s.role is missing: each message needs role \"user\" or \"assistant\"", field)
		default:
			return domain.Invalid("messages_invalid_role", field+".role", "%s.role is %q: it must be \"user\" or \"assistant\" (the question itself goes in q)", field, m.Role)
		}
		if strings.TrimSpace(m.Content) == "" {
			return domain.Invalid("messages_content_empty", field+".content", "%s.content is empty: send the turn's text", field)
		}
		if err := text.Check(field+".content", m.Content, MaxMessageChars); err != nil {
			return err
		}
		total += utf8.RuneCountInString(m.Content)
		if total > MaxConversationChars {
			return domain.Invalid("messages_total_too_long", "messages", "the messages' content adds up to more than %d characters: send fewer or shorter turns", MaxConversationChars)
		}
	}
	return nil
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

// ResolveFollowUp is the extractive rule that makes a follow-up question
// self-contained without a language model. The subject is the most
// salient noun phrase of the latest user turn (SalientPhrase). The first
// pronoun of q that stands for a thing (it, they, them, this, that,
// these, those, when not followed by a noun) is replaced by the subject,
// a possessive (its, their) by the subject's possessive. A question with
// no such pronoun that is elliptic ("And the default?", "What about
// deep mode?", or a fragment of at most three words that does not start
// as a question) gets "of" and the subject added at
// its end. Any other question, or a conversation with no user turn or no
// subject, is returned unchanged, and so is q when the resolved question
// would be longer than MaxQuestionChars. The second result says whether
// q changed.
func ResolveFollowUp(q string, ms []Message) (string, bool) {
	r, changed := resolveFollowUp(q, ms)
	if !changed || utf8.RuneCountInString(r) > MaxQuestionChars {
		return q, false
	}
	return r, true
}

func resolveFollowUp(q string, ms []Message) (string, bool) {
	prev := ""
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i].Role == UserRole {
			prev = ms[i].Content
			break
		}
	}
	subject := SalientPhrase(prev)
	if subject == "" {
		return q, false
	}
	toks := tokenRe.FindAllStringIndex(q, -1)
	for i, t := range toks {
		w := q[t[0]:t[1]]
		lw := strings.ToLower(w)
		repl := ""
		switch {
		case lw == "it" || lw == "they" || lw == "them":
			repl = subject
		case lw == "its" || lw == "their":
			repl = possessive(subject)
		case lw == "this" || lw == "that" || lw == "these" || lw == "those":
			// A determiner ("this cache") is not a pronoun; a pronoun
			// ends the question or is followed by a verb or a function
			// word.
			if i+1 < len(toks) {
				next := strings.ToLower(q[toks[i+1][0]:toks[i+1][1]])
				if !stopWords[next] && !verbs[next] {
					continue
				}
			}
			repl = subject
		default:
			continue
		}
		if t[0] == 0 || strings.TrimSpace(q[:t[0]]) == "" {
			repl = upperFirst(repl)
		}
		return q[:t[0]] + repl + q[t[1]:], true
	}
	if !elliptic(q, len(toks)) {
		return q, false
	}
	body := strings.TrimRightFunc(q, func(r rune) bool { return unicode.IsSpace(r) || r == '?' || r == '.' || r == '!' })
	end := strings.TrimSpace(q[len(body):])
	if end == "" {
		end = "?"
	}
	return body + " of " + subject + end[:1], true
}

var (
	tokenRe    = regexp.MustCompile(`[\p{L}\p{N}_][\p{L}\p{N}_'’-]*`)
	ellipticRe = regexp.MustCompile(`(?i)^\s*(and|also|what about|how about|and what about|and how about)\b`)
	askingRe   = regexp.MustCompile(`(?i)^\s*(what|which|who|whom|whose|when|where|why|how|is|are|do|does|did|can|could|should|will|would)\b`)
)

// elliptic: "And the default?", "What about deep mode?", or a fragment of
// at most three words that is not a question of its own ("The default
// size?").
func elliptic(q string, nWords int) bool {
	return ellipticRe.MatchString(q) || (nWords <= 3 && !askingRe.MatchString(q))
}

func possessive(s string) string {
	if strings.HasSuffix(strings.ToLower(s), "s") {
		return s + "’"
	}
	return s + "'s"
}

func upperFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}

// SalientPhrase is the most salient noun phrase of a question: of the
// runs of words that are neither function words nor common verbs (a run
// may hold "of", "'s" and a determiner after "of", and starts with the
// determiner before it), the one with the most such words, the first of
// equals. When the question has an auxiliary before the run ("How does
// the cache work?") and an unknown word ends the run before the end or a
// preposition, that word is taken for the main verb and dropped. ""
// when the question holds no such word.
func SalientPhrase(q string) string {
	toks := tokenRe.FindAllStringIndex(q, -1)
	type run struct{ from, to, content int }
	var best run
	for i := 0; i < len(toks); {
		w := strings.ToLower(q[toks[i][0]:toks[i][1]])
		if stopWords[w] || verbs[w] || determiners[w] {
			i++
			continue
		}
		r := run{from: i, to: i}
		for j := i; j < len(toks); j++ {
			w := strings.ToLower(q[toks[j][0]:toks[j][1]])
			content := !stopWords[w] && !verbs[w] && !determiners[w]
			if content {
				r.to, r.content = j+1, r.content+1
				continue
			}
			// "of" and a determiner after it continue the run when a
			// content word follows.
			if w == "of" || (determiners[w] && j > 0 && strings.ToLower(q[toks[j-1][0]:toks[j-1][1]]) == "of") {
				if j+1 < len(toks) {
					continue
				}
			}
			break
		}
		i = max(r.to, i+1)
		// The determiner before the run belongs to it.
		if r.from > 0 && determiners[strings.ToLower(q[toks[r.from-1][0]:toks[r.from-1][1]])] {
			r.from--
		}
		// The main verb of "how does the cache work": an unknown last
		// word after an auxiliary, before the end or a preposition.
		if r.content >= 2 && r.from > 0 {
			before := strings.ToLower(q[toks[r.from-1][0]:toks[r.from-1][1]])
			afterOK := r.to == len(toks) || prepositions[strings.ToLower(q[toks[r.to][0]:toks[r.to][1]])]
			if auxiliaries[before] && afterOK {
				r.to--
				r.content--
			}
		}
		if r.content > best.content {
			best = r
		}
	}
	if best.content == 0 {
		return ""
	}
	s := q[toks[best.from][0]:toks[best.to-1][1]]
	return strings.TrimRight(s, "'’-")
}

func wordSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

var (
	determiners = wordSet("the a an this that these those its their my our your his her some any each every")
	// auxiliaries are those after which a question's subject comes
	// before its main verb ("how does the cache work"); a form of "be"
	// is followed by a phrase.
	auxiliaries  = wordSet("do does did can could will would should shall may might must")
	prepositions = wordSet("from to in on at for with by about into over under after before of")
	stopWords    = wordSet(`what which who whom whose when where why how whether if and or but not no nor so than then
		do does did done doing can could will would should shall may might must is are was were be been being am has have had having
		i you he she it we they me him us them my your our its their mine yours
		from to in on at for with by about into over under after before of as up down out off again
		there here also just only very much many more most long often ever too
		please tell explain describe show give know want need`)
	verbs = wordSet(`keep keeps kept store stores stored take takes took leave leaves left work works use uses used mean means
		make makes made get gets got set sets run runs start starts stop stops change changes handle handles return returns
		go goes come comes happen happens cause causes expire expires last lasts hold holds cost costs open opens close closes
		send sends call calls let lets say says see sees find finds help helps support supports allow allows become becomes`)
)
