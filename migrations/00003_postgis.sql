-- +goose Up
-- PostGIS backs the records service's spatial read models.
CREATE EXTENSION IF NOT EXISTS postgis;

-- +goose Down
DROP EXTENSION IF EXISTS postgis;
