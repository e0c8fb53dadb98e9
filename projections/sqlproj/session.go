package sqlproj

import (
	"context"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// How arr reaches an analyst's role (docs/sql-projections.md, "Security
// model"): every statement of a projection's SQL runs in a session that
// logs in as the projection's role, never in one of arr's.
//
//   - The role's password is derived, never stored: HMAC-SHA-256 of the
//     role's name and the database's oid under a key of 32 random bytes
//     that arr makes in its database (public.sql_projection_role_key,
//     which only arr's user may read). Every arr process that can log in
//     as arr's user can derive it, and nobody else; a new database has a
//     new key, so a role left by a dropped database (whose oid a new one
//     reuses) does not keep a working password.
//   - arr sets it as a SCRAM-SHA-256 verifier computed here, so neither
//     the password nor anything it could be replayed from reaches the
//     server's logs.
//   - The role's CONNECTION LIMIT is 1: one analyst session per
//     projection at a time. arr's processes take turns (sessionOf waits
//     for the slot), each session serves one transaction and is closed.
//   - Every statement arr sends over the session is bounded from arr's
//     side (watchdog): past the statement timeout and a grace, or when the
//     caller gives up, arr ends the session's backend with
//     pg_terminate_backend from a session of its own. FATAL cannot be
//     trapped by the analyst's PL/pgSQL the way a cancel can.

// keyLen is the size of the key passwords are derived from.
const keyLen = 32

// roleKey returns the database's key for the roles' passwords, making it
// on first use.
func (e *Engine) roleKey(ctx context.Context) ([]byte, error) {
	e.keyMu.Lock()
	defer e.keyMu.Unlock()
	if e.key != nil {
		return e.key, nil
	}
	fresh := make([]byte, keyLen)
	if _, err := rand.Read(fresh); err != nil {
		return nil, err
	}
	var key []byte
	if err := e.pool.QueryRow(ctx, `WITH ins AS (INSERT INTO public.sql_projection_role_key (key) VALUES ($1) ON CONFLICT (only_row) DO NOTHING RETURNING key)
		SELECT key FROM ins UNION ALL SELECT key FROM public.sql_projection_role_key LIMIT 1`, fresh).Scan(&key); err != nil {
		return nil, fmt.Errorf("reading the key of the SQL projections' roles (run arr migrate): %w", err)
	}
	if len(key) != keyLen {
		return nil, fmt.Errorf("the key of the SQL projections' roles is %d bytes, not %d", len(key), keyLen)
	}
	e.key = key
	return key, nil
}

// rolePassword is the password of role in this database.
func (e *Engine) rolePassword(ctx context.Context, role string) (string, error) {
	key, err := e.roleKey(ctx)
	if err != nil {
		return "", err
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte("arr sql projection role password\x00" + strconv.FormatUint(uint64(e.dbOID), 10) + "\x00" + role))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)), nil
}

// scramIterations is the PBKDF2 cost of a verifier (PostgreSQL's
// default, scram_iterations).
const scramIterations = 4096

// scramVerifier is the SCRAM-SHA-256 verifier of password as PostgreSQL
// stores it (RFC 5802, 7677), with a fresh salt: ALTER ROLE … PASSWORD
// takes it as it is, so the password itself never reaches the server.
func scramVerifier(password string) (string, error) {
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	salted, err := pbkdf2.Key(sha256.New, password, salt, scramIterations, sha256.Size)
	if err != nil {
		return "", err
	}
	mac := func(key []byte, msg string) []byte {
		m := hmac.New(sha256.New, key)
		m.Write([]byte(msg))
		return m.Sum(nil)
	}
	stored := sha256.Sum256(mac(salted, "Client Key"))
	b64 := base64.StdEncoding.EncodeToString
	return "SCRAM-SHA-256$" + strconv.Itoa(scramIterations) + ":" + b64(salt) + "$" + b64(stored[:]) + ":" + b64(mac(salted, "Server Key")), nil
}

// slot is the one analyst session this process may have of a role.
func (e *Engine) slot(role string) chan struct{} {
	e.slotsMu.Lock()
	defer e.slotsMu.Unlock()
	s, ok := e.slots[role]
	if !ok {
		s = make(chan struct{}, 1)
		e.slots[role] = s
	}
	return s
}

// sessions begins transactions in sessions of one role (a SQL
// projection's Spec.TxPool): each Begin logs in as the role, and the
// transaction's end closes the session.
type sessions struct {
	e    *Engine
	role string
}

// BeginTx opens a session as the role and begins a transaction in it
// with opts.
func (s sessions) BeginTx(ctx context.Context, opts pgx.TxOptions) (pgx.Tx, error) {
	return s.e.begin(ctx, s.role, opts)
}

// roleBusy is PostgreSQL's "too many connections for role": another
// process holds the role's one session. badPassword is a login refused
// for its password.
const (
	roleBusy    = "53300"
	badPassword = "28P01"
)

// resetPassword sets the password arr derives for role (an arr role of
// this database's) again.
func (e *Engine) resetPassword(ctx context.Context, role, pw string) error {
	v, err := scramVerifier(pw)
	if err != nil {
		return err
	}
	var ours bool
	if err := e.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_roles r WHERE r.rolname = $1 AND NOT r.rolsuper
		AND r.rolname LIKE $2)`, role, "arrsql\\_"+strconv.FormatUint(uint64(e.dbOID), 10)+"\\_%").Scan(&ours); err != nil || !ours {
		return fmt.Errorf("resetting the password of %s: not an arr role of this database (%v)", role, err)
	}
	if _, err := e.pool.Exec(ctx, `ALTER ROLE `+pgx.Identifier{role}.Sanitize()+` PASSWORD `+literal(v)); err != nil {
		return fmt.Errorf("resetting the password of %s: %w", role, err)
	}
	e.cfg.Logger.Warn("SQL projections: a role's password had changed; arr set its own again", "role", role)
	return nil
}

// connect logs in as role, waiting (bounded by ctx) for the role's one
// session to be free; the session is watched (see watchdog).
func (e *Engine) connect(ctx context.Context, role string) (*pgx.Conn, error) {
	pw, err := e.rolePassword(ctx, role)
	if err != nil {
		return nil, err
	}
	if err := e.restoreSettings(ctx, role); err != nil {
		return nil, err
	}
	cc := e.pool.Config().ConnConfig.Copy()
	cc.User, cc.Password = role, pw
	cc.DefaultQueryExecMode = pgx.QueryExecModeDescribeExec
	cc.RuntimeParams["default_transaction_isolation"] = "read committed"
	cc.RuntimeParams["application_name"] = "arr-sqlproj"
	cc.Tracer = &watchdog{e: e, role: role, limit: e.cfg.StatementTimeout + e.grace()}
	wait := 10 * time.Millisecond
	reset := false
	for {
		conn, err := pgx.ConnectConfig(ctx, cc)
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == badPassword && !reset {
			// The role may change its own password (PostgreSQL lets
			// every role): that only locks arr out until arr sets its
			// own again, once.
			reset = true
			if rerr := e.resetPassword(ctx, role, pw); rerr == nil {
				continue
			}
		}
		if err == nil || !errors.As(err, &pgErr) || pgErr.Code != roleBusy {
			if err != nil {
				return nil, fmt.Errorf("logging in as %s: %w", role, err)
			}
			return conn, nil
		}
		// A session of a process that died mid-statement may run on
		// (nobody watches it now): past any statement's bound, it goes.
		e.endStale(ctx, role)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("logging in as %s (its one session is busy): %w", role, ctx.Err())
		case <-t.C:
		}
		wait = min(2*wait, 200*time.Millisecond)
	}
}

// restoreSettings puts arr's settings of role back if they are not what
// arr set (the role may ALTER ROLE CURRENT_USER [IN DATABASE] SET or
// RESET what is not a superuser's setting), as connect puts its password
// back: the settings a session starts with are arr's.
func (e *Engine) restoreSettings(ctx context.Context, role string) error {
	want := roleSettings(e.limits(), e.cfg.StatementTimeout)
	var ok bool
	if err := e.pool.QueryRow(ctx, `SELECT coalesce((SELECT s.setconfig FROM pg_catalog.pg_db_role_setting s JOIN pg_catalog.pg_roles r ON r.oid = s.setrole
			WHERE r.rolname = $1 AND s.setdatabase = $2::pg_catalog.oid), '{}') @> $3::pg_catalog.text[]
		AND coalesce((SELECT s.setconfig FROM pg_catalog.pg_db_role_setting s JOIN pg_catalog.pg_roles r ON r.oid = s.setrole
			WHERE r.rolname = $1 AND s.setdatabase = $2::pg_catalog.oid), '{}') <@ $3::pg_catalog.text[]
		AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_db_role_setting s JOIN pg_catalog.pg_roles r ON r.oid = s.setrole
			WHERE r.rolname = $1 AND s.setdatabase = 0)`, role, e.dbOID, want).Scan(&ok); err != nil {
		return fmt.Errorf("reading the settings of %s: %w", role, err)
	}
	if ok {
		return nil
	}
	var db string
	if err := e.pool.QueryRow(ctx, `SELECT pg_catalog.current_database()::pg_catalog.text`).Scan(&db); err != nil {
		return fmt.Errorf("resetting the settings of %s: %w", role, err)
	}
	for _, q := range settingStatements(pgx.Identifier{role}.Sanitize(), pgx.Identifier{db}.Sanitize(), e.limits(), e.cfg.StatementTimeout) {
		if _, err := e.pool.Exec(ctx, q); err != nil {
			return fmt.Errorf("resetting the settings of %s: %w", role, err)
		}
	}
	e.cfg.Logger.Warn("SQL projections: a role's settings had changed; arr set its own again", "role", role)
	return nil
}

// grace is how long past the statement timeout arr waits for PostgreSQL
// to end a statement before it ends the session.
func (e *Engine) grace() time.Duration { return max(2*time.Second, e.cfg.StatementTimeout/4) }

// begin is a transaction in a new session of role; it holds the
// process's slot of the role until the transaction ends.
func (e *Engine) begin(ctx context.Context, role string, opts pgx.TxOptions) (pgx.Tx, error) {
	slot := e.slot(role)
	select {
	case slot <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for a session of %s: %w", role, ctx.Err())
	}
	conn, err := e.connect(ctx, role)
	if err != nil {
		<-slot
		return nil, err
	}
	tx, err := conn.BeginTx(ctx, opts)
	if err != nil {
		e.hangUp(conn)
		<-slot
		return nil, fmt.Errorf("beginning a transaction as %s: %w", role, err)
	}
	return &sessionTx{Tx: tx, e: e, conn: conn, slot: slot}, nil
}

// hangUp closes conn; a backend that may still be running (the close
// did not go cleanly) is ended.
func (e *Engine) hangUp(conn *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	pid, role := conn.PgConn().PID(), conn.Config().User
	if err := conn.Close(ctx); err != nil {
		e.terminate(pid, role, "its session did not close cleanly")
	}
}

// sessionTx is a transaction whose end closes its session.
type sessionTx struct {
	pgx.Tx
	e    *Engine
	conn *pgx.Conn
	slot chan struct{}
	once sync.Once
}

func (t *sessionTx) Commit(ctx context.Context) error {
	err := t.Tx.Commit(ctx)
	t.end()
	return err
}

func (t *sessionTx) Rollback(ctx context.Context) error {
	err := t.Tx.Rollback(ctx)
	t.end()
	return err
}

func (t *sessionTx) end() {
	t.once.Do(func() {
		t.e.hangUp(t.conn)
		<-t.slot
	})
}

// watchdog bounds each statement arr sends over an analyst's session:
// PostgreSQL's statement_timeout is the analyst's to change (and its
// cancel is the analyst's to trap in PL/pgSQL), so past limit, or when
// the statement ends in an error that leaves the session unusable (the
// caller gave up: the backend may still be running), arr terminates the
// backend from its own session.
type watchdog struct {
	e     *Engine
	role  string
	limit time.Duration
	mu    sync.Mutex
	timer *time.Timer
}

func (w *watchdog) TraceQueryStart(ctx context.Context, conn *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	pid := conn.PgConn().PID()
	w.mu.Lock()
	if w.timer != nil {
		w.timer.Stop()
	}
	w.timer = time.AfterFunc(w.limit, func() {
		w.e.terminate(pid, w.role, fmt.Sprintf("a statement ran past %s", w.limit))
	})
	w.mu.Unlock()
	return ctx
}

func (w *watchdog) TraceQueryEnd(ctx context.Context, conn *pgx.Conn, data pgx.TraceQueryEndData) {
	w.mu.Lock()
	if w.timer != nil {
		w.timer.Stop()
		w.timer = nil
	}
	w.mu.Unlock()
	if data.Err != nil && (conn.IsClosed() || ctx.Err() != nil) {
		w.e.terminate(conn.PgConn().PID(), w.role, "the statement was abandoned: "+data.Err.Error())
	}
}

// terminate ends backend pid if it is still a session of role, from a
// session of arr's own (pg_terminate_backend: arr's user is a superuser
// or a member of the role).
func (e *Engine) terminate(pid uint32, role, why string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var ended bool
	err := e.pool.QueryRow(ctx, `SELECT coalesce(bool_or(pg_catalog.pg_terminate_backend(a.pid, 5000)), false) FROM pg_catalog.pg_stat_activity a
		WHERE a.pid = $1 AND a.usename = $2`, int32(pid), role).Scan(&ended)
	switch {
	case err != nil:
		e.cfg.Logger.Error("SQL projections: could not end an analyst's session", "role", role, "pid", pid, "why", why, "err", err)
	case ended:
		e.cfg.Logger.Warn("SQL projections: ended an analyst's session", "role", role, "pid", pid, "why", why)
	}
}

// endStale ends role's sessions that have run one statement, or sat in
// a transaction (idle in it included), for longer than arr lets any
// statement run: their process's watchdog is gone (it died), or they
// would have ended. It depends on no setting of the role's
// (idle_in_transaction_session_timeout is one the role may change).
func (e *Engine) endStale(ctx context.Context, role string) {
	limit := e.cfg.StatementTimeout + 2*e.grace()
	var ended int
	err := e.pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE pg_catalog.pg_terminate_backend(a.pid)) FROM pg_catalog.pg_stat_activity a
		WHERE a.usename = $1 AND a.state <> 'idle' AND pg_catalog.now() OPERATOR(pg_catalog.-) GREATEST(a.query_start, a.state_change, a.xact_start) OPERATOR(pg_catalog.>) pg_catalog.make_interval(secs => $2::pg_catalog.float8)`,
		role, limit.Seconds()).Scan(&ended)
	if err != nil && ctx.Err() == nil {
		e.cfg.Logger.Warn("SQL projections: looking for stale sessions", "role", role, "err", err)
	} else if ended > 0 {
		e.cfg.Logger.Warn("SQL projections: ended stale sessions of a role", "role", role, "sessions", ended, "older_than", limit)
	}
}

// terminateAll ends every session of role.
func (e *Engine) terminateAll(ctx context.Context, q interface {
	Exec(context.Context, string, ...any) (pgconn.CommandTag, error)
}, role string) error {
	_, err := q.Exec(ctx, `SELECT pg_catalog.pg_terminate_backend(a.pid, 5000) FROM pg_catalog.pg_stat_activity a WHERE a.usename = $1`, role)
	return err
}
