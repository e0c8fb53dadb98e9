-- +goose Up
-- Per-account data keys of the records service (contact columns of imported
-- lists are sealed with them). Key material is not a fact and must be
-- destroyable, so it lives here, outside the immutable event log: each key
-- is stored wrapped (AES-256-GCM) by the master key from the configuration
-- (ARR_MASTER_KEY). Erasing an account deletes its row (crypto-shredding):
-- every contact column it sealed, in the log, in read models and in
-- exports, is unreadable from then on.
CREATE TABLE records_data_keys (
    account_id  uuid        PRIMARY KEY,
    wrapped_key bytea       NOT NULL,
    master_id   text        COLLATE "C" NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE records_data_keys;
