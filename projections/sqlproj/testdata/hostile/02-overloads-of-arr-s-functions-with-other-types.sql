-- hostile: overloads of arr's functions with other types
-- expect: refused: function arr_exec(character varying)
-- arr:projection x2
CREATE TABLE t (v text);
-- arr-test: pwn
CREATE FUNCTION arr_exec(q varchar) RETURNS void LANGUAGE sql AS $$ SELECT pwn('arr_exec(varchar)') $$;
CREATE FUNCTION arr_query(q name, n bigint) RETURNS SETOF text LANGUAGE sql AS $$ SELECT pwn('arr_query(name)') $$;
-- arr:on CompletionRecorded
INSERT INTO t VALUES (:type);
