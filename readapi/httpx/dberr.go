package httpx

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/puddle/v2"

	"github.com/arr-dev/arr/domain"
)

// DatabaseRetryAfter is the Retry-After, in seconds, of a 503 caused by an
// unreachable database: long enough for a pool to reconnect or a failover
// to finish, short enough that a client does not give up.
const DatabaseRetryAfter = 5

// errDatabaseUnavailable is the domain error a PostgreSQL outage becomes.
var errDatabaseUnavailable = &domain.Error{Kind: domain.ErrUnavailable, Code: "database_unavailable",
	Message: fmt.Sprintf("the database is temporarily unreachable; retry in %d seconds", DatabaseRetryAfter)}

// TranslateDB is the one translation of PostgreSQL outages into the domain:
// when err says the database could not be reached or refused to work for
// now, it returns an error for which errors.Is(err, domain.ErrUnavailable)
// holds and that still wraps err (the cause, for the log); any other error,
// nil included, is returned as it is. An error that is already
// ErrUnavailable for another reason (a quota counter that failed) but
// whose cause is an outage is translated too: the database is what is
// unavailable. An outage is
//
//   - any failure to open a session (*pgconn.ConnectError), whatever the
//     server said: refused, unreachable, "database … is not currently
//     accepting connections" (SQLSTATE 55000 at connect), a database that
//     does not exist (3D000), too many clients (53300), a refused login;
//     pgx never got a session, so nothing about the request was judged;
//   - a network error (net.Error: refused, reset, timed out) that is not
//     an HTTP client's (*url.Error);
//   - a connection the server hung up under the call (io.ErrUnexpectedEOF,
//     which pgx returns as it is);
//   - a server error of SQLSTATE class 08 (connection exception) or 53
//     (insufficient resources: too many connections, out of memory or
//     disk), 57P01 to 57P05 (admin or crash shutdown, cannot connect now,
//     database dropped, idle session timeout: the session is gone), or
//     3D000 (the database does not exist: dropped under a running arr);
//   - a connection that was closed under the call (pgconn.ErrConnClosed),
//     a pool that was closed (the process is stopping), or a timeout inside
//     pgconn (pgconn.Timeout: the server stopped answering).
//
// A client's request body that stops or breaks is never an outage: the
// body reader (see Base.BodyTimeout) turns its errors into request errors
// before a handler sees them.
//
// A deadline that runs out while waiting for a pool connection is a bare
// context.DeadlineExceeded, which cannot be told from other deadlines;
// ProblemOf answers it with 503 (code unavailable) too. ProblemOf applies
// TranslateDB, so every service answers an outage with 503 and a
// Retry-After. It is safe for concurrent use.
func TranslateDB(err error) error {
	var done *unavailableDB
	if err == nil || errors.As(err, &done) || !databaseDown(err) {
		return err
	}
	return &unavailableDB{cause: err}
}

// unavailableDB is an outage: errors.Is finds domain.ErrUnavailable (and
// errors.As the *domain.Error) as well as the cause.
type unavailableDB struct{ cause error }

func (e *unavailableDB) Error() string   { return "database unavailable: " + e.cause.Error() }
func (e *unavailableDB) Unwrap() []error { return []error{errDatabaseUnavailable, e.cause} }

func databaseDown(err error) bool {
	var connectErr *pgconn.ConnectError
	if errors.As(err, &connectErr) {
		// Checked before the server's error it may wrap: a 55000 or a
		// 3D000 at connect is the server refusing a session, not an
		// answer about a statement.
		return true
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch code := pgErr.Code; {
		case strings.HasPrefix(code, "08"), strings.HasPrefix(code, "53"), strings.HasPrefix(code, "57P"):
			return true
		case code == "3D000":
			return true
		}
		// Any other server error is an answer about the statement, not
		// the server's availability, even if the cause chain also holds
		// a network error.
		return false
	}
	var netErr net.Error
	var urlErr *url.Error
	switch {
	case errors.As(err, &urlErr):
		// An HTTP client's failure (an upstream, a payment provider):
		// not the database, whatever network error it wraps.
		return false
	case errors.As(err, &netErr) && !errors.Is(err, context.DeadlineExceeded):
		// context.DeadlineExceeded is a net.Error too, but says nothing
		// about the database (ProblemOf answers it with 503 unavailable).
		return true
	case errors.Is(err, io.ErrUnexpectedEOF):
		// What pgx returns, as it is, when the server hangs up under a
		// call on a pooled connection.
		return true
	case errors.Is(err, pgconn.ErrConnClosed), errors.Is(err, puddle.ErrClosedPool):
		return true
	case pgconn.Timeout(err):
		return true
	}
	return false
}
