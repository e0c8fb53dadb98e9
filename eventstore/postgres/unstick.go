package postgres

import (
	"context"
	"time"
)

// A writer frozen while it holds the log head is ended by the server when
// its transaction idles between statements (HeadIdle, see lockHead). The
// server has no timeout for a writer frozen while it is sending: in the
// middle of a pipeline or of a COPY (a commit of copyThreshold events or
// more streams its rows under the lock), the backend waits for the rest
// without limit. A writer that waits for the head itself ends such a
// holder (watchHead).

// stuckHolders lists the sessions holding the log head (the relation lock
// of a commit's SELECT … FOR UPDATE or UPDATE) that are waiting for their
// client in the middle of a statement, with what shows progress: when the
// state began and, during a COPY, the bytes it has read.
const stuckHolders = `SELECT a.pid, a.state_change, coalesce(c.bytes_processed, -1)
	FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid LEFT JOIN pg_stat_progress_copy c ON c.pid = a.pid
	WHERE l.locktype = 'relation' AND l.relation = 'event_log_head'::regclass AND l.granted
	AND l.mode IN ('RowShareLock', 'RowExclusiveLock') AND a.pid <> pg_backend_pid()
	AND a.state = 'active' AND a.wait_event = 'ClientRead'`

// endStuck ends the session of a stuck holder if it is still as sampled.
const endStuck = `SELECT pg_terminate_backend(a.pid) FROM pg_stat_activity a LEFT JOIN pg_stat_progress_copy c ON c.pid = a.pid
	WHERE a.pid = $1 AND a.state_change = $2 AND coalesce(c.bytes_processed, -1) = $3
	AND a.state = 'active' AND a.wait_event = 'ClientRead'`

// holderSample is what stuckHolders said of one session.
type holderSample struct {
	since time.Time
	bytes int64
}

// watchHead runs while a commit waits for the head lock: every HeadIdle it
// samples the holders waiting for their client, and ends one found again
// with no progress (the same state since the last sample, no byte of COPY
// read): a live writer is never HeadIdle in the middle of sending. stop
// ends the watch; a commit calls it once its lock round trip is answered.
func (s *Store) watchHead(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	// Nothing runs unless the wait lasts HeadIdle (the usual wait is far
	// shorter), so a commit pays for a timer only.
	timer := time.AfterFunc(s.cfg.HeadIdle, func() {
		defer close(done)
		seen := s.endStuckHolders(ctx, nil)
		t := time.NewTicker(s.cfg.HeadIdle)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			seen = s.endStuckHolders(ctx, seen)
		}
	})
	return func() {
		cancel()
		if !timer.Stop() {
			<-done
		}
	}
}

// endStuckHolders takes one sample and ends the holders that made no
// progress since prev; it returns the sample.
func (s *Store) endStuckHolders(ctx context.Context, prev map[int32]holderSample) map[int32]holderSample {
	qctx, cancel := context.WithTimeout(ctx, s.cfg.HeadIdle)
	defer cancel()
	rows, err := s.pool.Query(qctx, stuckHolders)
	if err != nil {
		return prev
	}
	now := map[int32]holderSample{}
	for rows.Next() {
		var pid int32
		var h holderSample
		if err := rows.Scan(&pid, &h.since, &h.bytes); err != nil {
			break
		}
		now[pid] = h
	}
	rows.Close()
	for pid, h := range now {
		if p, ok := prev[pid]; !ok || !p.since.Equal(h.since) || p.bytes != h.bytes {
			continue
		}
		var ended bool
		if err := s.pool.QueryRow(qctx, endStuck, pid, h.since, h.bytes).Scan(&ended); err == nil {
			s.cfg.Logger.Warn("ended the session of a writer holding the log head with no progress in the middle of a statement (its process frozen?)", "backend", pid, "ended", ended, "waiting_since", h.since)
		}
		delete(now, pid)
	}
	return now
}
