package sqlproj

import (
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/arr-dev/arr/projections"
)

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
	return fmt.Sprintf("%s: %s would hold %.1f MiB of tables, past its limit of %.1f MiB (ARR_SQL_PROJECTION_MAX_MB); the batch was rolled back and the projection stopped: drop it, or raise the limit and restart arr",
		projections.StoppedMarker, e.Schema, float64(e.Bytes)/(1<<20), float64(e.Limit)/(1<<20))
}

// Is makes a DiskLimitError a projections.ErrStopped.
func (e *DiskLimitError) Is(target error) bool { return target == projections.ErrStopped }
