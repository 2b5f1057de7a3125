-- Issue 24: what an alert's output may show, the email send budget, and retention.

-- The scopes a key needs to see what an alert's runs contain (figures, contact fields), worked out
-- from the spec and the writing key when the spec is stored. NULL on alerts stored before: worked
-- out from the spec then, with pii:read (their messages were composed unmasked).
ALTER TABLE automations ADD COLUMN IF NOT EXISTS output_scopes text[];

-- A delivery counts once against its workspace's email budget, whatever its attempts.
ALTER TABLE deliveries ADD COLUMN IF NOT EXISTS budget_counted boolean NOT NULL DEFAULT false;

-- Emails counted against a workspace's hourly and daily budgets, per window (UTC hour or day).
CREATE TABLE IF NOT EXISTS send_budget (
  workspace_id  text NOT NULL,
  window_kind   text NOT NULL CHECK (window_kind IN ('hour', 'day')),
  window_start  timestamptz NOT NULL,
  sent          integer NOT NULL,
  PRIMARY KEY (workspace_id, window_kind, window_start)
);
CREATE INDEX IF NOT EXISTS send_budget_by_start ON send_budget (window_start);

-- Retention walks these from the oldest.
CREATE INDEX IF NOT EXISTS runs_by_start ON runs (started_at);
CREATE INDEX IF NOT EXISTS mailbox_by_created ON mailbox (created_at);
