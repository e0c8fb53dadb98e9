-- hostile: raising its own time limit
-- expect: refused: canceling statement due to statement timeout
-- arr:projection x11
CREATE TABLE t (v text);
SELECT set_config('statement_timeout', '0', true), pg_sleep(5);
-- arr:on CompletionRecorded
INSERT INTO t VALUES (:type);
