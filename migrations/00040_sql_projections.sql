-- +goose Up
-- Analysts' SQL projections (projections/sqlproj) run as roles of their
-- own that may create and write only in their projection's schema. Before
-- PostgreSQL 15 every role could create objects in schema public, where
-- arr's tables are; take that from PUBLIC (arr's own user owns them).
-- The right to create temporary tables, which PUBLIC holds on every new
-- database, is revoked when the first SQL projection is set up
-- (sqlproj.ensureRole) rather than here: it is a right on the database,
-- kept in the server's catalog, which a database cloned from a migrated
-- template (as tests make theirs) does not inherit.
REVOKE CREATE ON SCHEMA public FROM PUBLIC;

-- +goose Down
SELECT 1;
