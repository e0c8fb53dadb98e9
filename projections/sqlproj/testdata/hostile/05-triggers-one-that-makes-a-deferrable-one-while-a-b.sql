-- hostile: triggers: one that makes a deferrable one while a batch runs
-- expect: parked: deferrable trigger late on u
-- arr:projection x5
CREATE TABLE t (v text);
CREATE TABLE u (v text);
-- arr-test: pwn
CREATE FUNCTION fire() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pwn('deferred trigger made at run time'); RETURN NULL; END $$;
CREATE FUNCTION arm() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgname = 'late') THEN
    EXECUTE 'CREATE CONSTRAINT TRIGGER late AFTER INSERT ON u DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION fire()';
  END IF;
  INSERT INTO u VALUES (NEW.v);
  RETURN NULL;
END $$;
CREATE TRIGGER arm AFTER INSERT ON t FOR EACH ROW EXECUTE FUNCTION arm();
-- arr:on CompletionRecorded
INSERT INTO t VALUES (:type);
