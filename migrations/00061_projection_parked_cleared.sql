-- +goose Up
-- A parked event that was applied (arr projections retry) or replaced by
-- a rebuild is marked cleared, not deleted, in the transaction that
-- applied it: a SQL projection's role commits its parked events with its
-- batch, and it holds only column-level privileges on the tables it
-- shares with arr (projections/sqlproj, ensureRole), because PostgreSQL's
-- LOCK TABLE checks table-level privileges alone and DELETE cannot be
-- granted on columns. Readers take rows WHERE cleared_at IS NULL; parking
-- the event again sets it back to NULL; arr's own user deletes cleared
-- rows later (projections.purgeCleared).
ALTER TABLE projection_parked ADD COLUMN cleared_at timestamptz;

-- +goose Down
DELETE FROM projection_parked WHERE cleared_at IS NOT NULL;
ALTER TABLE projection_parked DROP COLUMN cleared_at;
