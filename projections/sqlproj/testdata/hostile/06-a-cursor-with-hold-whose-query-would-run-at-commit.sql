-- hostile: a cursor WITH HOLD, whose query would run at commit
-- expect: runs as its role
-- arr:projection x6
CREATE TABLE t (v text);
-- arr-test: pwn
DO $$ BEGIN EXECUTE 'DECLARE c CURSOR WITH HOLD FOR SELECT pwn(''cursor with hold'')'; END $$;
-- arr:on CompletionRecorded
INSERT INTO t VALUES (:type);
