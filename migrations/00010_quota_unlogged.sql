-- +goose Up
-- The quota counters are operational state (see 00004): an UNLOGGED table
-- writes no WAL for them, so counting a request neither waits for nor adds
-- to the WAL flush that the event log's commits (the audit chain's among
-- them) wait for. After a PostgreSQL crash the table is empty: the windows
-- in progress start from zero, which only forgives requests.
ALTER TABLE quota_counters SET UNLOGGED;

-- +goose Down
ALTER TABLE quota_counters SET LOGGED;
