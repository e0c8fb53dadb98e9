-- +goose Up
-- The event log as an RFC 6962 Merkle tree (docs/transparency.md).
--
-- events.leaf_hash: each event's leaf hash, SHA-256(0x00 || leaf data),
-- written by the same INSERT or COPY that stores the event, in the
-- transaction that assigns its position. Leaf i of the tree is the event
-- at position i+1 (positions have no gaps). Events stored before this
-- migration get theirs when the store catches the tree up (the only update
-- events_are_immutable allows: a NULL leaf hash set once, nothing else
-- changed).
ALTER TABLE events ADD COLUMN leaf_hash bytea CHECK (octet_length(leaf_hash) = 32);

-- The tree as far as it is built, beside the position it covers: its size
-- and its frontier (the hashes of the perfect subtrees it is made of,
-- largest first, 32 bytes each), updated under the head's row lock in the
-- same transaction as the events. A commit extends the tree from here
-- without reading anything else.
ALTER TABLE event_log_head
    ADD COLUMN tree_size     bigint NOT NULL DEFAULT 0,
    ADD COLUMN tree_frontier bytea  NOT NULL DEFAULT ''::bytea;

-- Completed interior nodes of level 4 and up (perfect subtrees of 16
-- leaves and more): node (level, idx) covers leaves idx*2^level to
-- (idx+1)*2^level - 1. Nodes of levels 1 to 3 are computed from at most 8
-- leaf hashes when a proof needs them, so this table holds about one row
-- per 16 events. A node never changes once written.
CREATE TABLE event_tree_nodes (
    level smallint NOT NULL CHECK (level BETWEEN 4 AND 63),
    idx   bigint   NOT NULL CHECK (idx >= 0),
    hash  bytea    NOT NULL CHECK (octet_length(hash) = 32),
    PRIMARY KEY (level, idx)
);

-- Signed tree heads: C2SP checkpoints signed with the log's Ed25519 key,
-- one per tree size. checkpoint is the signed note as served; the other
-- columns repeat what it says, for queries.
CREATE TABLE event_tree_heads (
    size         bigint      PRIMARY KEY CHECK (size >= 0),
    root         bytea       NOT NULL CHECK (octet_length(root) = 32),
    timestamp_ms bigint      NOT NULL,
    origin       text        NOT NULL,
    verifier_key text        NOT NULL,
    checkpoint   text        NOT NULL,
    stored_at    timestamptz NOT NULL DEFAULT now()
);

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION events_are_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- The one update allowed: setting the leaf hash of an event stored
    -- before the tree existed, changing nothing else.
    -- (Nested, so that OLD.leaf_hash is read on rows of events only.)
    IF TG_OP = 'UPDATE' AND TG_TABLE_NAME = 'events' THEN
        IF OLD.leaf_hash IS NULL AND NEW.leaf_hash IS NOT NULL
           AND (NEW.position, NEW.event_id, NEW.stream_id, NEW.stream_version, NEW.event_type, NEW.schema_version,
                NEW.data::text, NEW.correlation_id, NEW.causation_id, NEW.actor, NEW.request_id, NEW.recorded_at)
               IS NOT DISTINCT FROM
               (OLD.position, OLD.event_id, OLD.stream_id, OLD.stream_version, OLD.event_type, OLD.schema_version,
                OLD.data::text, OLD.correlation_id, OLD.causation_id, OLD.actor, OLD.request_id, OLD.recorded_at) THEN
            RETURN NEW;
        END IF;
    END IF;
    RAISE EXCEPTION '% are immutable: % on % is not allowed', TG_TABLE_NAME, TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'restrict_violation';
END;
$$;
-- +goose StatementEnd
CREATE TRIGGER event_tree_nodes_no_update BEFORE UPDATE OR DELETE ON event_tree_nodes
    FOR EACH ROW EXECUTE FUNCTION events_are_immutable();
CREATE TRIGGER event_tree_nodes_no_truncate BEFORE TRUNCATE ON event_tree_nodes
    FOR EACH STATEMENT EXECUTE FUNCTION events_are_immutable();
CREATE TRIGGER event_tree_heads_no_update BEFORE UPDATE OR DELETE ON event_tree_heads
    FOR EACH ROW EXECUTE FUNCTION events_are_immutable();
CREATE TRIGGER event_tree_heads_no_truncate BEFORE TRUNCATE ON event_tree_heads
    FOR EACH STATEMENT EXECUTE FUNCTION events_are_immutable();

-- +goose Down
DROP TABLE event_tree_heads;
DROP TABLE event_tree_nodes;
ALTER TABLE event_log_head DROP COLUMN tree_frontier, DROP COLUMN tree_size;
ALTER TABLE events DROP COLUMN leaf_hash;
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION events_are_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'events are immutable: % on events is not allowed', TG_OP
        USING ERRCODE = 'restrict_violation';
END;
$$;
-- +goose StatementEnd
