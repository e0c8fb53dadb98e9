package answerapi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"sync"
	"time"

	"github.com/arr-dev/arr/domain/answer"
)

// resolutionTTL is how long a follow-up's resolution is reused: as long
// as the answer it leads to is cached, so a cached follow-up asked again
// costs no model call.
const resolutionTTL = 6 * time.Hour

// resolution is a follow-up resolved: the self-contained question and how.
type resolution struct {
	question, by string
	expires      time.Time
}

// resolutions keeps follow-up resolutions in process, keyed by a hash of
// the question and its turns (resolutionKey). Safe for concurrent use;
// bounded like memo.
type resolutions struct {
	mu  sync.Mutex
	m   map[string]resolution
	max int
}

func newResolutions(max int) *resolutions {
	return &resolutions{m: map[string]resolution{}, max: max}
}

// resolutionKey hashes the question and every turn (role and content,
// length-prefixed, so no two conversations share a key).
func resolutionKey(q string, ms []answer.Message) string {
	h := sha256.New()
	write := func(s string) {
		h.Write([]byte(strconv.Itoa(len(s)) + ":" + s))
	}
	write("v1")
	write(q)
	for _, m := range ms {
		write(m.Role)
		write(m.Content)
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// resolve is the follow-up's resolution: the one kept, else resolve's
// (which may ask the language model), kept for resolutionTTL.
func (r *resolutions) resolve(ctx context.Context, now time.Time, q string, ms []answer.Message,
	resolve func(context.Context, string, []answer.Message) (string, string)) (string, string) {
	key := resolutionKey(q, ms)
	r.mu.Lock()
	got, ok := r.m[key]
	r.mu.Unlock()
	if ok && now.Before(got.expires) {
		return got.question, got.by
	}
	question, by := resolve(ctx, q, ms)
	if ctx.Err() != nil {
		return question, by // cut short: not kept
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.m) >= r.max {
		for k, v := range r.m { // drop the expired, else about a quarter
			if !now.Before(v.expires) || len(r.m) >= r.max*3/4 {
				delete(r.m, k)
			}
		}
	}
	r.m[key] = resolution{question: question, by: by, expires: now.Add(resolutionTTL)}
	return question, by
}
