-- +goose Up
-- pg_trgm backs the records service's address search: a trigram index on
-- the parcels read model's normalized addresses, matched by word
-- similarity (tolerant of typos and of a missing street type).
CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- +goose Down
DROP EXTENSION IF EXISTS pg_trgm;
