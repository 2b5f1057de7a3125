-- Funnel definitions, one row per funnel of a website. `steps` and `filters` are stored as the
-- validated, normalised definition the API returns.
CREATE TABLE IF NOT EXISTS funnels (
  id            uuid PRIMARY KEY,
  workspace_id  text NOT NULL,
  website_id    text NOT NULL,
  name          text NOT NULL,
  scope         text NOT NULL,
  step_order    text NOT NULL,
  window_days   integer NOT NULL,
  filters       jsonb NOT NULL,
  steps         jsonb NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS funnels_by_website ON funnels (website_id, created_at, id);

-- POST /funnels answers kept for 24 hours per API key and Idempotency-Key, so a retried create
-- returns the funnel it made instead of making a second one.
CREATE TABLE IF NOT EXISTS idempotency_keys (
  workspace_id  text NOT NULL,
  key_id        text NOT NULL,
  key           text NOT NULL,
  request_hash  text NOT NULL,
  status        integer NOT NULL,
  response      jsonb NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, key_id, key)
);
