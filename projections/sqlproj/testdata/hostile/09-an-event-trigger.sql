-- hostile: an event trigger
-- expect: refused: permission denied to create event trigger
-- arr:projection x9
CREATE TABLE t (v text);
-- arr-test: pwn
CREATE FUNCTION on_ddl() RETURNS event_trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pwn('event trigger'); END $$;
CREATE EVENT TRIGGER e ON ddl_command_start EXECUTE FUNCTION on_ddl();
-- arr:on CompletionRecorded
INSERT INTO t VALUES (:type);
