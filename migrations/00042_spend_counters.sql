-- +goose Up
-- The gateway keys' limits (commands/spend): per bucket (a key's or an
-- account's budget in one period, a key's requests or tokens in one UTC
-- minute) what requests in flight have reserved and what ended ones
-- spent: money in micro-dollars, tokens, or requests. A request is
-- admitted by one transaction that locks its buckets in (bucket,
-- window_start) order and reserves only if every one of them stays within
-- its limit with what is used and reserved, so the limits hold exactly
-- across processes; it settles (reserved down, used up by the real
-- amount) when it ends. Logged, unlike quota_counters: a budget's spend
-- is money and must survive a crash. Rows of ended minute windows are
-- deleted by the servers; budget periods are kept (the spend shown).
CREATE TABLE spend_counters (
    bucket       text        COLLATE "C" NOT NULL,
    window_start timestamptz NOT NULL,
    window_end   timestamptz NOT NULL,
    used         bigint      NOT NULL DEFAULT 0 CHECK (used >= 0),
    reserved     bigint      NOT NULL DEFAULT 0 CHECK (reserved >= 0),
    PRIMARY KEY (bucket, window_start)
);
CREATE INDEX spend_counters_window_end ON spend_counters (window_end);

-- Each reservation in flight, by request: what it reserved in which
-- counters, leased until expires_at. Settling deletes it; a process that
-- dies mid-request leaves it, and the servers' sweep releases it (takes
-- its amounts off the counters' reserved) once its lease has run out, so
-- a crash cannot hold a budget for the rest of its period.
CREATE TABLE spend_reservations (
    id         uuid        PRIMARY KEY,
    buckets    text[]      NOT NULL,
    starts     timestamptz[] NOT NULL,
    amounts    bigint[]    NOT NULL,
    expires_at timestamptz NOT NULL
);
CREATE INDEX spend_reservations_expires_at ON spend_reservations (expires_at);

-- +goose Down
DROP TABLE spend_reservations;
DROP TABLE spend_counters;
