-- +goose Up
-- The poison-event policy of the projection runner (projections/park.go).
--
-- projection_parked: an event a projection could not apply after its
-- retries. The projection moves past it (its checkpoint advances in the
-- same transaction that records the row), /healthz turns "degraded" and
-- names the projection, and `arr projections retry NAME` applies the
-- parked events again once the projection can. A row stays until its
-- event is applied.
CREATE TABLE projection_parked (
    projection  text        COLLATE "C" NOT NULL,
    position    bigint      NOT NULL,
    event_id    uuid        NOT NULL,
    event_type  text        COLLATE "C" NOT NULL,
    error       text        NOT NULL,
    attempts    integer     NOT NULL DEFAULT 1,
    parked_at   timestamptz NOT NULL DEFAULT now(),
    retried_at  timestamptz,
    PRIMARY KEY (projection, position)
);

-- projection_faults: a projection whose last batch failed, at the
-- checkpoint it could not get past. A row is current while the
-- projection's checkpoint is still at or before its position; a projection
-- that fails closed (identity) makes keyed requests answer 503 while its
-- row is current.
CREATE TABLE projection_faults (
    projection  text        COLLATE "C" PRIMARY KEY,
    position    bigint      NOT NULL,
    error       text        NOT NULL,
    attempts    integer     NOT NULL DEFAULT 1,
    since       timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE projection_faults;
DROP TABLE projection_parked;
