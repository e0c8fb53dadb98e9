-- +goose Up
-- The keys that protect data belong to the database (adapters/boundkey):
-- the records master key, the event log's signing key and the gateway's
-- audit HMAC key. When the first process makes or adopts one, it records
-- the key's fingerprint here, never the key: for a secret key,
-- SHA-256("arr-key-fingerprint" 0x00 purpose 0x00 key); for the log's
-- Ed25519 key, SHA-256 of its public key, which is recorded too (it is
-- public, and `arr events verify` checks heads with it). The first writer
-- wins (INSERT ... ON CONFLICT DO NOTHING, then read back), so processes
-- racing on a fresh database agree; every later process compares its key
-- with the row and refuses to start with another. arr never changes a row;
-- an operator who must bind another key (the database recorded the wrong
-- one) deletes the row (docs/keys.md).
CREATE TABLE key_fingerprints (
    purpose     text        COLLATE "C" PRIMARY KEY CHECK (purpose IN ('records_master_key', 'log_signing_key', 'audit_hmac_key')),
    fingerprint text        COLLATE "C" NOT NULL CHECK (fingerprint ~ '^sha256:[0-9a-f]{64}$'),
    public_key  text,
    created_at  timestamptz NOT NULL DEFAULT now(),
    created_by  text        NOT NULL
);

-- Signed heads the operator disowned (`arr events disown-heads`): heads
-- kept before the log's key was bound to the database that a process with
-- another key signed. Each is recorded in the log itself first (the event
-- LogHeadsDisowned at event_position); the head stays in event_tree_heads
-- (heads are never changed or removed) but is no longer served, used or
-- extended. A row is never changed.
CREATE TABLE event_tree_heads_disowned (
    size            bigint      PRIMARY KEY REFERENCES event_tree_heads (size),
    key_fingerprint text        COLLATE "C" NOT NULL,
    reason          text        NOT NULL,
    disowned_by     text        NOT NULL,
    disowned_at     timestamptz NOT NULL,
    event_position  bigint      NOT NULL
);
CREATE TRIGGER event_tree_heads_disowned_no_update BEFORE UPDATE OR DELETE ON event_tree_heads_disowned
    FOR EACH ROW EXECUTE FUNCTION events_are_immutable();
CREATE TRIGGER event_tree_heads_disowned_no_truncate BEFORE TRUNCATE ON event_tree_heads_disowned
    FOR EACH STATEMENT EXECUTE FUNCTION events_are_immutable();

-- +goose Down
DROP TABLE event_tree_heads_disowned;
DROP TABLE key_fingerprints;
