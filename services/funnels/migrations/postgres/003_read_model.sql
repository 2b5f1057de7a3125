-- The state of each funnel's read model (ClickHouse funnel_attempts, README "Read model"):
-- `generation` numbers the definitions whose attempts were computed (a change of steps, order,
-- window or audience filter, or an operator rebuild, starts a new one); `read_model` is 'building'
-- until every attempt of that generation is stored, then 'ready'. Reads use the attempts only when
-- ready and answer from the events until then. `build_lease` lets one process at a time build.
ALTER TABLE funnels ADD COLUMN IF NOT EXISTS generation integer NOT NULL DEFAULT 1;
ALTER TABLE funnels ADD COLUMN IF NOT EXISTS read_model text NOT NULL DEFAULT 'building';
ALTER TABLE funnels ADD COLUMN IF NOT EXISTS build_done integer NOT NULL DEFAULT 0;
ALTER TABLE funnels ADD COLUMN IF NOT EXISTS build_total integer NOT NULL DEFAULT 0;
ALTER TABLE funnels ADD COLUMN IF NOT EXISTS build_lease timestamptz;
ALTER TABLE funnels ADD COLUMN IF NOT EXISTS build_error text;
ALTER TABLE funnels ADD COLUMN IF NOT EXISTS ready_at timestamptz;
CREATE INDEX IF NOT EXISTS funnels_building ON funnels (website_id) WHERE read_model = 'building';
CREATE INDEX IF NOT EXISTS funnels_by_workspace ON funnels (workspace_id);
