-- One-time setup, by a superuser, of a database that arr runs in as a
-- role that is not a superuser (docs/sql-projections.md, "Running arr as
-- a role that is not a superuser"):
--
--   createuser --login --createrole arr
--   createdb --owner arr arr
--   psql -d arr -v arr_role=arr -f scripts/superuser-setup.sql
--
-- arr does the rest itself (migrations, read models, the roles of SQL
-- projections: LOGIN roles with a password arr derives and sets as a
-- SCRAM verifier, one session each) as its role. Running it again changes
-- nothing. pg_hba.conf must let the roles arrsql_… log in to this database
-- with a password (scram-sha-256) from where arr runs, and to no other
-- (docs/sql-projections.md shows the lines).
\set ON_ERROR_STOP on

-- PostGIS is not a trusted extension: only a superuser may create it.
CREATE EXTENSION IF NOT EXISTS postgis;

-- The functions of pg_catalog that every role may run and that reach past
-- a SQL projection's schema (NOTIFY on arr's channels, the advisory locks
-- arr's projections hold, large objects, logical decoding messages) are
-- taken from PUBLIC in this database; arr's role keeps them.
SET arr.setup_role = :'arr_role';
DO $setup$
DECLARE
  f regprocedure;
BEGIN
  FOR f IN SELECT p.oid::regprocedure FROM pg_catalog.pg_proc p
    WHERE p.pronamespace = 'pg_catalog'::regnamespace
      AND (p.proname ~ '^pg_(try_)?advisory_'
        OR p.proname = ANY ('{pg_notify,lo_creat,lo_create,lo_from_bytea,lo_import,pg_logical_emit_message}'::name[]))
  LOOP
    EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', f);
    EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO %I', f, current_setting('arr.setup_role'));
  END LOOP;
END
$setup$;

-- temp_file_limit bounds the temporary files of a SQL projection's
-- session; arr sets it on each projection's role (ALTER ROLE … IN
-- DATABASE … SET), which only a superuser may, unless granted.
GRANT SET ON PARAMETER temp_file_limit TO :"arr_role";
