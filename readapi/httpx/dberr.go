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
// nil included, is returned as it is. An outage is
//
//   - a failure to connect (*pgconn.ConnectError) or a network error
//     (net.Error: refused, reset, timed out) that is not an HTTP client's
//     (*url.Error);
//   - a connection the server hung up under the call (io.ErrUnexpectedEOF,
//     which pgx returns as it is);
//   - a server error of SQLSTATE class 08 (connection exception) or 53
//     (insufficient resources: too many connections, out of memory or
//     disk), or 57P01, 57P02, 57P03 (admin shutdown, crash shutdown,
//     cannot connect now: the server is starting or stopping);
//   - a connection that was closed under the call (pgconn.ErrConnClosed),
//     a pool that was closed (the process is stopping), or a timeout inside
//     pgconn (pgconn.Timeout: the server stopped answering).
//
// A deadline that runs out while waiting for a pool connection is a bare
// context.DeadlineExceeded, which cannot be told from other deadlines;
// ProblemOf answers it with 503 (code unavailable) too. ProblemOf applies
// TranslateDB, so every service answers an outage with 503 and a
// Retry-After. It is safe for concurrent use.
func TranslateDB(err error) error {
	if err == nil || !databaseDown(err) || errors.Is(err, domain.ErrUnavailable) {
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
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch code := pgErr.Code; {
		case strings.HasPrefix(code, "08"), strings.HasPrefix(code, "53"):
			return true
		case code == "57P01", code == "57P02", code == "57P03":
			return true
		}
		// Any other server error is an answer about the statement, not
		// the server's availability, even if the cause chain also holds
		// a network error.
		return false
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	var urlErr *url.Error
	switch {
	case errors.As(err, &connectErr):
		return true
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
