-- Each workspace's count of requests per calendar month (UTC), the durable copy of the KV counter
-- `quota:ws:<id>:<YYYY-MM>`. The gateway flushes the latest counts it has seen every ~2 s (and when
-- it stops), keeping the greatest value, so replicas flushing at once never lower a count. When the
-- KV has lost a counter (Redis restarted without persistence, an embedded process restarted), the
-- first request that finds it new adds the stored count back before it is decided.
-- No foreign key to workspaces: one unknown id must not fail the flush of every other workspace.
CREATE TABLE quota_usage (
  workspace_id  uuid NOT NULL,
  month         text NOT NULL CHECK (month ~ '^[0-9]{4}-[0-9]{2}$'),
  used          bigint NOT NULL CHECK (used >= 0),
  updated_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, month)
);
