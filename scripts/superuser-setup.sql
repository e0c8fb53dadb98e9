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

-- pg_trgm backs the records service's search (migration 00050 creates it
-- too); created here so that its functions are taken from PUBLIC below.
CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- A SQL projection's role may run only pg_catalog's functions and its
-- own (projections/sqlproj, ensureRole): every function outside
-- pg_catalog that PUBLIC may run (the extensions', whose C code may not
-- check for interrupts; information_schema's) and the functions of
-- pg_catalog that reach past a projection's schema (NOTIFY on arr's
-- channels, the advisory locks arr's projections hold, large objects,
-- logical decoding messages) are taken from PUBLIC in this database;
-- arr's role keeps them. Run this again after creating an extension.
SET arr.setup_role = :'arr_role';
DO $setup$
DECLARE
  f text;
BEGIN
  FOR f IN SELECT quote_ident(n.nspname) || '.' || quote_ident(p.proname) || '(' || pg_get_function_identity_arguments(p.oid) || ')'
    FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
    WHERE ((n.nspname = 'pg_catalog'
        AND (p.proname ~ '^pg_(try_)?advisory_'
          OR p.proname = ANY ('{pg_notify,lo_creat,lo_create,lo_from_bytea,lo_import,pg_logical_emit_message}'::name[])))
      OR n.nspname NOT IN ('pg_catalog', 'pg_toast'))
      AND EXISTS (SELECT 1 FROM aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) a
        WHERE a.grantee = 0 AND a.privilege_type = 'EXECUTE')
  LOOP
    EXECUTE format('REVOKE EXECUTE ON ROUTINE %s FROM PUBLIC', f);
    EXECUTE format('GRANT EXECUTE ON ROUTINE %s TO %I', f, current_setting('arr.setup_role'));
  END LOOP;
END
$setup$;

-- temp_file_limit bounds the temporary files of a SQL projection's
-- session; arr sets it on each projection's role (ALTER ROLE … IN
-- DATABASE … SET), which only a superuser may, unless granted.
GRANT SET ON PARAMETER temp_file_limit TO :"arr_role";
