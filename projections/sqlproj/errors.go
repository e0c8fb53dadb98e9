package sqlproj

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/arr-dev/arr/domain/text"
	"github.com/arr-dev/arr/projections"
)

// maxErrorChars bounds the text of an error of a projection's own SQL
// wherever it goes (logs, status, parked events, the CLI).
const maxErrorChars = 2000

// AnalystError is an error of a projection's own SQL: untrusted data. Its
// text is bounded (maxErrorChars) with its control characters escaped,
// and it carries no SQLSTATE: the analyst's SQL may raise any (RAISE …
// USING ERRCODE), so arr decides from what it knows itself whether the
// call timed out (its context ended, or the call ran for its whole
// statement timeout: then it is a context.DeadlineExceeded, retried) or
// the session went away (retried); any other error is the events' (the
// runner parks them).
type AnalystError struct {
	Msg     string
	timeout bool
}

func (e *AnalystError) Error() string { return e.Msg }

// Unwrap is context.DeadlineExceeded for a call that timed out.
func (e *AnalystError) Unwrap() error {
	if e.timeout {
		return context.DeadlineExceeded
	}
	return nil
}

// untrusted is err of a call of analyst SQL that began elapsed ago, with
// the statement timeout limit, as arr passes it on: an error the database
// reported (the analyst's to word and code) becomes an *AnalystError; a
// closed session (ended by arr's watchdog or the server) is transient;
// arr's own errors stay as they are.
func untrusted(ctx context.Context, closed bool, elapsed, limit time.Duration, err error) error {
	var pgErr *pgconn.PgError
	if err == nil || !errors.As(err, &pgErr) {
		return err
	}
	msg := text.Bound(err.Error(), maxErrorChars)
	if closed && ctx.Err() == nil && elapsed < limit {
		return fmt.Errorf("the session of the projection's role ended: %w (%s)", net.ErrClosed, msg)
	}
	return &AnalystError{Msg: msg, timeout: ctx.Err() != nil || elapsed >= limit || closed}
}

// stmtError is err, the database's about statement st (what names it), as
// an *Error at its place in the file. The database was given seen: prefix
// and then the statement rewritten as m says (nil: as written); a
// position in another query (one the statement ran) is not the file's.
func (d *Definition) stmtError(what string, st Statement, m offsetMap, prefix, seen string, err error) error {
	pos := st.Offset
	msg := err.Error()
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		msg = pgErr.Message
		if pgErr.Detail != "" {
			msg += "; " + pgErr.Detail
		}
		if pgErr.Hint != "" {
			msg += "; hint: " + pgErr.Hint
		}
		msg += fmt.Sprintf(" (SQLSTATE %s)", pgErr.Code)
		q, at := pgErr.InternalQuery, int(pgErr.InternalPosition)
		if strings.TrimSpace(q) != strings.TrimSpace(seen) {
			at = 0
		}
		if at > 0 {
			off := byteOffset(q, at-1) - len(prefix)
			if m != nil && off >= 0 {
				off = m.old(off)
			}
			if off >= 0 && off <= len(st.Text) {
				pos = st.Offset + off
			}
		}
	}
	msg = text.Bound(msg, maxErrorChars)
	p := newLines(d.SQL).at(pos)
	return &Error{File: d.File, Line: p.line, Col: p.col, Statement: what, Msg: msg, Err: err}
}

// byteOffset is the byte offset of the n-th character (0-based) of s.
func byteOffset(s string, n int) int {
	i := 0
	for off := range s {
		if i == n {
			return off
		}
		i++
	}
	return len(s)
}

// DiskLimitError says a projection's tables grew past their limit
// (Config.MaxBytes, ARR_SQL_PROJECTION_MAX_MB): the batch or DDL
// statement that took them there was rolled back, and the runner stops
// the projection (projections.ErrStopped) rather than retry it.
type DiskLimitError struct {
	Schema       string
	Bytes, Limit int64
}

func (e *DiskLimitError) Error() string {
	return fmt.Sprintf("%s: %s would hold %.1f MiB (its tables, the catalog rows of its objects and its parked events), past its limit of %.1f MiB (ARR_SQL_PROJECTION_MAX_MB); the batch was rolled back and the projection stopped: drop it, or raise the limit and restart arr",
		projections.StoppedMarker, e.Schema, float64(e.Bytes)/(1<<20), float64(e.Limit)/(1<<20))
}

// Is makes a DiskLimitError a projections.ErrStopped.
func (e *DiskLimitError) Is(target error) bool { return target == projections.ErrStopped }
