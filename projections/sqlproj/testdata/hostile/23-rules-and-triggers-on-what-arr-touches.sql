-- hostile: rules and triggers on what arr touches
-- Rules on the projection's tables (DO ALSO on insert, update and delete;
-- an ON SELECT rule that makes a table a view, PostgreSQL 15 and older)
-- run with the rights of whoever's statement touches the table. During
-- each batch a trigger also puts a rule, a trigger and a row security
-- policy on every other table of the schema (a table arr might make there
-- and write, such as a checkpoint), and tries the same on arr's own
-- tables of public.
-- runs: x23 rule on insert
-- runs: x23 arming
-- arr:projection x23
-- probe(route) is what the analyst's code does wherever it runs: it
-- records where (route) and as whom it runs in its own table log, tries
-- to become arr's database user (set_config of role to the session user,
-- SET ROLE to each user that may be arr's, RESET ROLE), then tries what
-- only arr's user may: write public.arr_canary and nextval of
-- public.arr_canary_seq (which the test makes, owned by arr's user, with
-- no grants; the sequence moves even in a transaction rolled back), read
-- the log and the keys' hashes, grant itself pg_execute_server_program
-- (which a CREATEROLE user may, on PostgreSQL 15; not tried as a
-- superuser), run a program on the server. Each attempt
-- swallows its error, so that what happened is recorded, not raised.
CREATE TABLE log (
  at timestamptz, route text, schema_name text,
  session_user_name text, current_user_name text, user_after text,
  set_config_role text, set_role text, reset_role text,
  canary text, canary_seq text, events text, api_keys text, grant_program text, copy_program text
);
CREATE FUNCTION probe(route text) RETURNS text LANGUAGE plpgsql AS $probe$
DECLARE
  s0 text := session_user;
  c0 text := current_user;
  set_cfg text;
  set_role text := '';
  reset_role text;
  canary text;
  seq text;
  ev text;
  keys text;
  grant_prog text;
  prog text;
  u text;
BEGIN
  BEGIN
    PERFORM pg_catalog.set_config('role', session_user::text, true);
    set_cfg := 'ok: now ' || current_user;
  EXCEPTION WHEN OTHERS THEN set_cfg := 'failed: ' || SQLERRM;
  END;
  FOR u IN SELECT DISTINCT v.n FROM (
      SELECT a.usename::text FROM pg_catalog.pg_stat_activity a
      WHERE a.usename IS NOT NULL AND a.usename::text NOT LIKE 'arrsql%'
      UNION SELECT pg_catalog.pg_get_userbyid(d.datdba)::text FROM pg_catalog.pg_database d
      WHERE d.datname = pg_catalog.current_database()
      UNION SELECT 'postgres') AS v(n) LOOP
    BEGIN
      EXECUTE pg_catalog.format('SET ROLE %I', u);
      set_role := set_role || u || ': ok, now ' || current_user || '; ';
    EXCEPTION WHEN OTHERS THEN set_role := set_role || u || ': failed: ' || SQLERRM || '; ';
    END;
  END LOOP;
  BEGIN
    RESET ROLE;
    reset_role := 'ok: now ' || current_user;
  EXCEPTION WHEN OTHERS THEN reset_role := 'failed: ' || SQLERRM;
  END;
  BEGIN
    INSERT INTO public.arr_canary VALUES (route, session_user, current_user);
    canary := 'ok: wrote public.arr_canary as ' || current_user;
  EXCEPTION WHEN OTHERS THEN canary := 'failed: ' || SQLERRM;
  END;
  BEGIN
    seq := 'ok: public.arr_canary_seq moved to ' || pg_catalog.nextval('public.arr_canary_seq');
  EXCEPTION WHEN OTHERS THEN seq := 'failed: ' || SQLERRM;
  END;
  BEGIN
    SELECT 'ok: ' || e.position || ' ' || e.event_id || ' ' || e.data::text INTO ev
    FROM public.events e ORDER BY e.position DESC LIMIT 1;
    ev := coalesce(ev, 'ok: no events');
  EXCEPTION WHEN OTHERS THEN ev := 'failed: ' || SQLERRM;
  END;
  BEGIN
    SELECT 'ok: ' || coalesce(pg_catalog.string_agg(k.secret_hash, ','), 'no keys') INTO keys FROM rm_identity.api_keys k;
  EXCEPTION WHEN OTHERS THEN keys := 'failed: ' || SQLERRM;
  END;
  BEGIN
    IF (SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.rolname = current_user) THEN
      grant_prog := 'not tried: ' || current_user || ' is a superuser';
    ELSE
      EXECUTE pg_catalog.format('GRANT pg_execute_server_program TO %I', current_user);
      grant_prog := 'ok: granted pg_execute_server_program to ' || current_user;
    END IF;
  EXCEPTION WHEN OTHERS THEN grant_prog := 'failed: ' || SQLERRM;
  END;
  BEGIN
    EXECUTE pg_catalog.format('COPY (SELECT %L) TO PROGRAM %L',
      route || ' in ' || pg_catalog.current_schema() || ': session_user ' || session_user || ', current_user ' || current_user,
      'cat >> WITNESS');
    prog := 'ok: ran a program as ' || current_user;
  EXCEPTION WHEN OTHERS THEN prog := 'failed: ' || SQLERRM;
  END;
  BEGIN
    INSERT INTO log VALUES (pg_catalog.clock_timestamp(), route, pg_catalog.current_schema(), s0, c0, current_user,
      set_cfg, set_role, reset_role, canary, seq, ev, keys, grant_prog, prog);
  EXCEPTION WHEN OTHERS THEN NULL;
  END;
  RETURN route;
END $probe$;
CREATE TABLE t (v text);
CREATE TABLE seen (v text);
CREATE TABLE own (name text PRIMARY KEY);
INSERT INTO own VALUES ('t'), ('seen'), ('own'), ('log');
CREATE RULE on_insert AS ON INSERT TO t DO ALSO SELECT probe('x23 rule on insert');
CREATE RULE on_update AS ON UPDATE TO t DO ALSO SELECT probe('x23 rule on update');
CREATE RULE on_delete AS ON DELETE TO t DO ALSO SELECT probe('x23 rule on delete');
DO $$
BEGIN
  CREATE RULE "_RETURN" AS ON SELECT TO seen DO INSTEAD SELECT probe('x23 select rule')::text AS v;
EXCEPTION WHEN OTHERS THEN
  PERFORM probe('x23 select rule refused: ' || SQLERRM);
END $$;
-- fire finds probe in its own schema, whoever's statement fires it.
CREATE FUNCTION fire() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE own text;
BEGIN
  SELECT n.nspname INTO own FROM pg_catalog.pg_trigger g JOIN pg_catalog.pg_proc p ON p.oid = g.tgfoid
    JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace WHERE g.tgrelid = TG_RELID AND g.tgname = TG_NAME;
  EXECUTE pg_catalog.format('SELECT %I.probe($1)', own) USING 'x23 trigger on ' || TG_TABLE_SCHEMA || '.' || TG_TABLE_NAME;
  RETURN NULL;
END $$;
CREATE FUNCTION arm() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  rel record;
  outcome text;
BEGIN
  FOR rel IN SELECT c.oid::regclass AS id, c.relname, n.nspname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind IN ('r', 'p') AND (n.nspname = pg_catalog.current_schema() OR n.nspname = 'public')
        AND c.relname NOT IN (SELECT name FROM own)
        AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_trigger g WHERE g.tgrelid = c.oid AND g.tgname = 'hostile') LOOP
    BEGIN
      EXECUTE pg_catalog.format('CREATE TRIGGER hostile AFTER INSERT OR UPDATE OR DELETE ON %s FOR EACH ROW EXECUTE FUNCTION %I.fire()', rel.id, pg_catalog.current_schema());
      EXECUTE pg_catalog.format('CREATE RULE hostile AS ON UPDATE TO %s DO ALSO SELECT %I.probe(%L)', rel.id, pg_catalog.current_schema(), 'x23 rule on ' || rel.nspname || '.' || rel.relname);
      EXECUTE pg_catalog.format('ALTER TABLE %s ENABLE ROW LEVEL SECURITY', rel.id);
      EXECUTE pg_catalog.format('CREATE POLICY hostile ON %s USING (%I.probe(%L) IS NOT NULL)', rel.id, pg_catalog.current_schema(), 'x23 policy on ' || rel.nspname || '.' || rel.relname);
      outcome := 'armed';
    EXCEPTION WHEN OTHERS THEN outcome := 'refused: ' || SQLERRM;
    END;
    IF rel.nspname <> 'public' OR NOT EXISTS (SELECT 1 FROM log WHERE route LIKE 'x23 arming public.%') THEN
      PERFORM probe('x23 arming ' || rel.nspname || '.' || rel.relname || ': ' || outcome);
    END IF;
  END LOOP;
  PERFORM probe('x23 arming done');
  RETURN NULL;
END $$;
CREATE TRIGGER arm AFTER INSERT ON t FOR EACH STATEMENT EXECUTE FUNCTION arm();
-- arr:on CompletionRecorded
INSERT INTO t VALUES (:type);
UPDATE t SET v = v WHERE v = 'no such type';
