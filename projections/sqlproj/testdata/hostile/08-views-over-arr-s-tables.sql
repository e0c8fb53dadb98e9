-- hostile: views over arr's tables
-- expect: refused: permission denied for table events
-- arr:projection x8
CREATE TABLE t (v text);
CREATE VIEW ev AS SELECT event_type FROM public.events;
CREATE VIEW ev2 WITH (security_invoker = true) AS SELECT event_type FROM public.events;
-- arr:on CompletionRecorded
INSERT INTO t SELECT event_type FROM ev UNION ALL SELECT event_type FROM ev2;
