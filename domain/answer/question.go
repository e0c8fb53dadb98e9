package answer

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/domain/text"
)

// Question length bounds, in characters (Unicode code points) after
// trimming surrounding white space.
const (
	MinQuestionChars = 3
	MaxQuestionChars = 500
)

// Tier is the answer quality asked for.
type Tier string

// Mode is how much research goes into an answer.
type Mode string

// Tiers and modes.
const (
	Free  Tier = "free"
	Pro   Tier = "pro"
	Quick Mode = "quick"
	Deep  Mode = "deep"
)

// Request is a validated question with its tier and mode.
type Request struct {
	// Query is the question as asked, trimmed.
	Query string
	// Normalized is the question folded for the cache: lower case, runs of
	// white space and punctuation collapsed to one space.
	Normalized string
	Tier       Tier
	Mode       Mode
	// Generation is the local index's generation the answer may draw on
	// (0 for web search): part of the cache key, so an answer is stale as
	// soon as a document it could have used changes.
	Generation uint64
	// Filters narrow the sources the answer may cite (domains and a
	// window of published dates): part of the cache key.
	Filters Filters
	// Messages are the conversation's earlier turns (CheckMessages), the
	// question its new turn; nil when none were given.
	Messages []Message
	// Resolved is the question made self-contained against Messages
	// (Resolve); "" when no turns were given: the question is Query.
	Resolved string
	// ResolvedBy says how: "llm", "extractive" or "unchanged".
	ResolvedBy string
	// Format is the shape the answer is asked in (response_format): the
	// zero value is prose; a JSON Schema is part of the cache key.
	Format ResponseFormat
	// ContextSize scales how many sources are read ("" is medium: the
	// tier's and mode's); part of the cache key unless medium.
	ContextSize ContextSize
}

// Resolve records the self-contained question the request is researched
// for; its normalization becomes the cache's, so the cache key is the
// resolved question's.
func (r *Request) Resolve(resolved, by string) {
	r.Resolved, r.ResolvedBy = resolved, by
	if n := Normalize(resolved); n != "" {
		r.Normalized = n
	}
}

// Question is the self-contained question: Resolved, else Query.
func (r Request) Question() string {
	if r.Resolved != "" {
		return r.Resolved
	}
	return r.Query
}

// ParseRequest validates q, tier and mode as a client sent them (missing
// tier and mode take their defaults) and returns the request or a domain
// validation error naming the field.
func ParseRequest(q string, qPresent bool, tier, mode string) (Request, error) {
	if !qPresent {
		return Request{}, domain.Invalid("q_missing", "q", "q is required: the question to answer, %d to %d characters", MinQuestionChars, MaxQuestionChars)
	}
	q = strings.TrimSpace(q)
	if q == "" {
		return Request{}, domain.Invalid("q_empty", "q", "q is empty: send the question to answer, %d to %d characters", MinQuestionChars, MaxQuestionChars)
	}
	if err := text.Check("q", q, MaxQuestionChars); err != nil {
		return Request{}, err
	}
	n := utf8.RuneCountInString(q)
	norm := Normalize(q)
	if n < MinQuestionChars || utf8.RuneCountInString(norm) < MinQuestionChars {
		return Request{}, domain.Invalid("q_too_short", "q", "q is too short: at least %d letters or digits are needed to search for an answer", MinQuestionChars)
	}
	r := Request{Query: q, Normalized: norm, Tier: Free, Mode: Quick}
	switch strings.TrimSpace(tier) {
	case "", string(Free):
	case string(Pro):
		r.Tier = Pro
	default:
		return Request{}, domain.Invalid("invalid_tier", "tier", "tier must be free or pro; got %q", tier)
	}
	switch strings.TrimSpace(mode) {
	case "", string(Quick):
	case string(Deep):
		r.Mode = Deep
	default:
		return Request{}, domain.Invalid("invalid_mode", "mode", "mode must be quick or deep; got %q", mode)
	}
	return r, nil
}

// Authorize checks that plan may use what the request asks: tier=pro,
// mode=deep and a context size above medium need a plan with deep
// answers (Pro, Scale, Enterprise). It is the one place a plan's reach
// is decided: no request field reads more sources than the plan's tier
// and mode do (search_context_size high on the Free plan would read
// half as many again, about the pro tier's count).
func (r Request) Authorize(plan account.Plan) error {
	if plan.Offer().Limits.DeepAnswers {
		return nil
	}
	if r.Tier == Free && r.Mode == Quick {
		if r.ContextSize == ContextHigh {
			return domain.Forbidden("pro_plan_required", "search_context_size high reads more sources than the free tier does: it needs the Pro plan (or Scale or Enterprise); this key's account is on %s. Upgrade on the account page, /account, or ask with search_context_size low or medium", plan.Offer().Title)
		}
		return nil
	}
	what := "tier=pro"
	if r.Mode == Deep {
		what = "mode=deep"
	}
	if r.Tier == Pro && r.Mode == Deep {
		what = "tier=pro and mode=deep"
	}
	return domain.Forbidden("pro_plan_required", "%s needs the Pro plan (or Scale or Enterprise); this key's account is on %s. Upgrade on the account page, /account, or ask with tier=free and mode=quick", what, plan.Offer().Title)
}

// CacheKey is the key of the 6-hour answer cache: a hash of the normalized
// question, the tier, the mode, the local index's generation and the
// filters (their resolved dates: a time_range asked on another day is
// another key), the context size unless medium and, when one is asked,
// the response format (its schema).
func (r Request) CacheKey() string {
	sum := sha256.Sum256([]byte("v2\x00" + string(r.Tier) + "\x00" + string(r.Mode) + "\x00" + strconv.FormatUint(r.Generation, 10) + "\x00" + r.Normalized + r.Filters.key() + r.ContextSize.key() + r.Format.key()))
	return hex.EncodeToString(sum[:16])
}

// Normalize folds a question so that trivially different spellings share a
// cache entry: lower case, letters and digits kept, everything else a
// separator, separators collapsed, leading and trailing ones dropped.
func Normalize(q string) string {
	var b strings.Builder
	sep := false
	for _, r := range strings.ToLower(q) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if sep && b.Len() > 0 {
				b.WriteByte(' ')
			}
			sep = false
			b.WriteRune(r)
			continue
		}
		sep = true
	}
	return b.String()
}
