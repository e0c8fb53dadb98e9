-- hostile: rules
-- expect: runs as its role
-- arr:projection x7
CREATE TABLE t (v text);
-- arr-test: pwn
CREATE RULE r AS ON INSERT TO t DO ALSO SELECT pwn('rule');
-- arr:on CompletionRecorded
INSERT INTO t VALUES (:type);
