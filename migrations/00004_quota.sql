-- +goose Up
-- Fixed-window request counters of the plans' quotas (readapi/ratelimit).
-- Operational state, not facts: they are not event-sourced, and a lost row
-- only forgives a window's requests. One row per bucket (an account, a key
-- or a client IP of one service) and window; a request is admitted by one
-- atomic upsert that increments count only while it is below the limit.
-- Rows of windows that ended are deleted in bounded batches by the servers.
CREATE TABLE quota_counters (
    bucket       text        COLLATE "C" NOT NULL,
    window_start timestamptz NOT NULL,
    window_end   timestamptz NOT NULL,
    count        bigint      NOT NULL CHECK (count >= 0),
    PRIMARY KEY (bucket, window_start)
);
CREATE INDEX quota_counters_window_end ON quota_counters (window_end);

-- +goose Down
DROP TABLE quota_counters;
