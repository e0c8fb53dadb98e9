-- arr:projection spend_by_model
-- Spend and completions per UTC day and model, from the gateway's audit
-- entries (the completion is the entry's payload).
CREATE TABLE spend (
    day        date   NOT NULL,
    model      text   NOT NULL,
    cost_micro bigint NOT NULL,
    n          bigint NOT NULL,
    PRIMARY KEY (day, model)
);

-- arr:on CompletionRecorded
INSERT INTO spend VALUES (:recorded_at::date, :data->'payload'->>'model', (:data->'payload'->>'cost_micro_usd')::bigint, 1)
ON CONFLICT (day, model) DO UPDATE SET cost_micro = spend.cost_micro + EXCLUDED.cost_micro, n = spend.n + 1;
