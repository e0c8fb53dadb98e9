package eventcatalog

import (
	"sort"
	"time"
)

// LogStat is one event type's figures in the log, as the log-stats read
// model keeps them.
type LogStat struct {
	Type                        string
	Events                      int64
	FirstPosition, LastPosition uint64
	FirstAt, LastAt             time.Time
}

// WithLog returns types with each one's figures from stats, plus an entry
// (Registered false) for each type the log holds that types lack: events
// this build cannot decode, which every reader skips. The result is sorted
// by name; types is not modified.
func WithLog(types []Type, stats []LogStat) []Type {
	by := make(map[string]LogStat, len(stats))
	for _, s := range stats {
		by[s.Type] = s
	}
	out := make([]Type, 0, len(types)+len(stats))
	for _, t := range types {
		if s, ok := by[t.Type]; ok {
			t = withStat(t, s)
			delete(by, t.Type)
		}
		out = append(out, t)
	}
	for _, s := range by {
		out = append(out, withStat(Type{Type: s.Type, UpcastFrom: []int{}}, s))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Type < out[j].Type })
	return out
}

func withStat(t Type, s LogStat) Type {
	first, last := s.FirstAt.UTC(), s.LastAt.UTC()
	t.Events, t.FirstPosition, t.LastPosition, t.FirstAt, t.LastAt = s.Events, s.FirstPosition, s.LastPosition, &first, &last
	return t
}
