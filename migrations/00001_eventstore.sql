-- +goose Up
-- The event log. Positions are assigned while holding the row lock on
-- event_log_head, so they increase in commit order with no gaps: a reader of
-- "position > N" never misses an event that commits later with a smaller
-- position, because no such event can exist.
CREATE TABLE event_log_head (
    id       boolean PRIMARY KEY DEFAULT true CHECK (id),
    position bigint NOT NULL
);
INSERT INTO event_log_head (id, position) VALUES (true, 0);

-- data is json, not jsonb: stored as written, validated, and read back
-- without conversion (jsonb costs a parse on every append and a rendering on
-- every read; json operators such as data->>'field' still work). Metadata
-- lives in plain columns. Text keys compare bytewise (COLLATE "C").
CREATE TABLE events (
    position       bigint      PRIMARY KEY,
    event_id       uuid        NOT NULL,
    stream_id      text        COLLATE "C" NOT NULL,
    stream_version bigint      NOT NULL,
    event_type     text        COLLATE "C" NOT NULL,
    schema_version integer     NOT NULL,
    data           json        NOT NULL,
    correlation_id text,
    causation_id   text,
    actor          text,
    request_id     text,
    recorded_at    timestamptz NOT NULL,
    CONSTRAINT events_event_id_key UNIQUE (event_id),
    CONSTRAINT events_stream_version_key UNIQUE (stream_id, stream_version)
);

CREATE TABLE event_streams (
    stream_id  text        COLLATE "C" PRIMARY KEY,
    version    bigint      NOT NULL,
    updated_at timestamptz NOT NULL
);

-- Events are facts: never updated, never deleted.
-- +goose StatementBegin
CREATE FUNCTION events_are_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'events are immutable: % on events is not allowed', TG_OP
        USING ERRCODE = 'restrict_violation';
END;
$$;
-- +goose StatementEnd
CREATE TRIGGER events_no_update BEFORE UPDATE OR DELETE ON events
    FOR EACH ROW EXECUTE FUNCTION events_are_immutable();
CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON events
    FOR EACH STATEMENT EXECUTE FUNCTION events_are_immutable();

-- +goose Down
DROP TABLE events;
DROP TABLE event_streams;
DROP TABLE event_log_head;
DROP FUNCTION events_are_immutable();
