-- hostile: a table named as arr's
-- expect: refused: relation arr_events
-- arr:projection x10
CREATE TABLE arr_events (v text);
-- arr:on CompletionRecorded
INSERT INTO arr_events VALUES (:type);
