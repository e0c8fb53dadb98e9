-- +goose Up
-- One row per projection (and per fan-out forwarder): how far into the log
-- it has applied, and the hash of the read-model DDL it was built with.
CREATE TABLE projection_checkpoints (
    name        text        PRIMARY KEY,
    position    bigint      NOT NULL DEFAULT 0,
    schema_hash text        NOT NULL DEFAULT '',
    updated_at  timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE projection_checkpoints;
