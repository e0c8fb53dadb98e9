-- +goose Up
-- Analysts' SQL projections run in sessions that log in as the
-- projection's own role (projections/sqlproj, docs/sql-projections.md,
-- "Security model"). Their batches commit with their checkpoint (and the
-- events they park) in one transaction of that session, so the role may
-- read and advance its own checkpoint row, and record its own parked
-- events, and nothing else of these tables: row-level security keeps a
-- role named arrsql_<database oid>_<name> to the rows of projection
-- <name>. arr's user owns the tables and bypasses the policies; other
-- roles (a read-only user of the read models) see what their grants give
-- them, as before. The grants themselves are given to each role when arr
-- sets it up (sqlproj.ensureRole).
ALTER TABLE projection_checkpoints ENABLE ROW LEVEL SECURITY;
CREATE POLICY sql_projection_own_row ON projection_checkpoints
    USING (CURRENT_USER::text NOT LIKE 'arrsql\_%'
        OR CURRENT_USER::text = 'arrsql_' || (SELECT d.oid FROM pg_catalog.pg_database d WHERE d.datname = pg_catalog.current_database()) || '_' || name);
ALTER TABLE projection_parked ENABLE ROW LEVEL SECURITY;
CREATE POLICY sql_projection_own_rows ON projection_parked
    USING (CURRENT_USER::text NOT LIKE 'arrsql\_%'
        OR CURRENT_USER::text = 'arrsql_' || (SELECT d.oid FROM pg_catalog.pg_database d WHERE d.datname = pg_catalog.current_database()) || '_' || projection);

-- The key the passwords of the projections' roles are derived from
-- (sqlproj.rolePassword): made by arr, 32 random bytes, readable by arr's
-- user only. A database has its own, so a new database (even one that
-- reuses the oid of a dropped one) derives other passwords.
CREATE TABLE sql_projection_role_key (
    only_row   boolean     PRIMARY KEY DEFAULT true CHECK (only_row),
    key        bytea       NOT NULL CHECK (length(key) = 32),
    created_at timestamptz NOT NULL DEFAULT now()
);
REVOKE ALL ON sql_projection_role_key FROM PUBLIC;

-- +goose Down
DROP TABLE sql_projection_role_key;
DROP POLICY sql_projection_own_rows ON projection_parked;
ALTER TABLE projection_parked DISABLE ROW LEVEL SECURITY;
DROP POLICY sql_projection_own_row ON projection_checkpoints;
ALTER TABLE projection_checkpoints DISABLE ROW LEVEL SECURITY;
