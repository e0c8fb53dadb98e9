-- hostile: a temporary table with ON COMMIT, and a deferred trigger on it
-- A temporary table ON COMMIT DELETE ROWS is emptied at every commit of
-- its session; one made in a batch would outlive the projection's
-- transaction in the session, and a deferred trigger on it fire at
-- commit. Projections' roles may not make temporary tables: the attempt
-- is recorded either way.
-- runs: x26 temporary table in the DDL
-- runs: x26 temporary table in a batch
-- arr:projection x26
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
CREATE FUNCTION fire() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM probe('x26 trigger on the temporary table');
  RETURN NULL;
END $$;
CREATE FUNCTION make_temp(route text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  BEGIN
    CREATE TEMPORARY TABLE IF NOT EXISTS tt (v text DEFAULT probe('x26 default of the temporary table')) ON COMMIT DELETE ROWS;
    INSERT INTO tt DEFAULT VALUES;
    PERFORM probe(route || ': made');
  EXCEPTION WHEN OTHERS THEN
    PERFORM probe(route || ': refused: ' || SQLERRM);
  END;
END $$;
DO $$ BEGIN PERFORM make_temp('x26 temporary table in the DDL'); END $$;
CREATE FUNCTION arm() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM make_temp('x26 temporary table in a batch');
  RETURN NULL;
END $$;
CREATE TRIGGER arm AFTER INSERT ON t FOR EACH STATEMENT EXECUTE FUNCTION arm();
-- arr:on CompletionRecorded
INSERT INTO t VALUES (:type);
