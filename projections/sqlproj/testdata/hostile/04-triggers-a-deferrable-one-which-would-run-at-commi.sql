-- hostile: triggers: a deferrable one, which would run at commit
-- expect: refused: deferrable trigger late on t
-- arr:projection x4
CREATE TABLE t (v text);
-- arr-test: pwn
CREATE FUNCTION fire() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pwn('deferred trigger'); RETURN NULL; END $$;
CREATE CONSTRAINT TRIGGER late AFTER INSERT ON t DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION fire();
-- arr:on CompletionRecorded
INSERT INTO t VALUES (:type);
