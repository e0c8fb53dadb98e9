-- hostile: search_path: pg_catalog's names in the projection's schema
-- expect: runs as its role
-- arr:projection x3
CREATE TABLE t (v text);
-- arr-test: pwn
CREATE FUNCTION current_setting(text) RETURNS text LANGUAGE sql AS $$ SELECT pwn('current_setting') $$;
CREATE FUNCTION set_config(text, text, boolean) RETURNS text LANGUAGE sql AS $$ SELECT pwn('set_config') $$;
CREATE FUNCTION to_regprocedure(text) RETURNS regprocedure LANGUAGE sql AS $$ SELECT pwn('to_regprocedure')::regprocedure $$;
CREATE FUNCTION pg_advisory_xact_lock(integer, integer) RETURNS void LANGUAGE sql AS $$ SELECT pwn('pg_advisory_xact_lock') $$;
CREATE FUNCTION unnest(anyarray) RETURNS SETOF text LANGUAGE sql AS $$ SELECT pwn('unnest') $$;
CREATE FUNCTION string_to_array(text, text) RETURNS text[] LANGUAGE sql AS $$ SELECT ARRAY[pwn('string_to_array')] $$;
CREATE FUNCTION eq(name, varchar) RETURNS boolean LANGUAGE sql AS $$ SELECT pwn('operator =') IS NULL $$;
CREATE OPERATOR = (LEFTARG = name, RIGHTARG = varchar, FUNCTION = eq);
SELECT pg_catalog.set_config('search_path', 'rm_x3, pg_catalog', false);
-- arr:on CompletionRecorded
INSERT INTO t VALUES (:type);
