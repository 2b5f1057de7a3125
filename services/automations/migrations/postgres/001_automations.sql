-- Alerts, their runs and deliveries, events waiting for a digest, chat connections and the local
-- mailbox (email kept here when no SMTP server is configured). Times are written by the service's
-- clock (bound parameters), so schedules, leases and backoff follow one clock.

CREATE TABLE IF NOT EXISTS automations (
  id               uuid PRIMARY KEY,
  workspace_id     text NOT NULL,
  website_id       text NOT NULL,
  name             text NOT NULL,
  template_id      text,
  status           text NOT NULL CHECK (status IN ('active', 'paused')),
  -- json, not jsonb: the spec keeps the order it was written in (gather's figures show in that order).
  spec             json NOT NULL,
  kind             text NOT NULL CHECK (kind IN ('event', 'schedule', 'threshold')),
  -- Event alerts: the types they listen to (indexed for the consumer's lookup).
  event_types      text[] NOT NULL DEFAULT '{}',
  -- What the RPC calls of a run need: the workspace and website as the gateway resolved them at creation.
  workspace        jsonb NOT NULL,
  website          jsonb NOT NULL,
  timezone         text NOT NULL,
  currency         text NOT NULL,
  -- Schedule and threshold alerts: the next cron time still to run (the scheduler's claim guard).
  next_run_at      timestamptz,
  -- Threshold alerts: whether the condition held at the last evaluation.
  firing           boolean NOT NULL DEFAULT false,
  last_evaluated_at timestamptz,
  last_value       double precision,
  -- Event alerts: the last event that matched (a manual run builds from it).
  last_event       jsonb,
  created_by       text NOT NULL,
  created_at       timestamptz NOT NULL,
  updated_at       timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS automations_by_website ON automations (website_id, created_at, id);
CREATE INDEX IF NOT EXISTS automations_events ON automations USING gin (event_types) WHERE status = 'active' AND kind = 'event';
CREATE INDEX IF NOT EXISTS automations_due ON automations (next_run_at) WHERE status = 'active' AND next_run_at IS NOT NULL;

-- One row per run. trigger_key is unique per alert, so a redelivered event, a schedule slot claimed
-- by two replicas or a retried digest makes at most one run.
CREATE TABLE IF NOT EXISTS runs (
  id             uuid PRIMARY KEY,
  -- Insertion order: runs started in the same instant still list newest first.
  seq            bigint GENERATED ALWAYS AS IDENTITY,
  automation_id  uuid NOT NULL REFERENCES automations (id) ON DELETE CASCADE,
  trigger        text NOT NULL,
  trigger_key    text NOT NULL,
  test           boolean NOT NULL DEFAULT false,
  status         text NOT NULL CHECK (status IN ('queued', 'sent', 'failed', 'skipped')),
  -- The composed message (subject, text, html, chat) every delivery of the run sends.
  message        jsonb NOT NULL,
  composed_by    text NOT NULL,
  compose_note   text,
  link           text NOT NULL,
  started_at     timestamptz NOT NULL,
  finished_at    timestamptz,
  UNIQUE (automation_id, trigger_key)
);
CREATE INDEX IF NOT EXISTS runs_by_automation ON runs (automation_id, started_at DESC, seq DESC);

-- The delivery queue: one row per run and recipient. status: queued (due at next_attempt_at),
-- sending (an attempt is under way: recorded before the message leaves), sent, failed (the dead
-- state: a permanent error or attempts used up; an operator can retry), skipped.
CREATE TABLE IF NOT EXISTS deliveries (
  id               uuid PRIMARY KEY,
  run_id           uuid NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  automation_id    uuid NOT NULL,
  workspace_id     text NOT NULL,
  channel          text NOT NULL CHECK (channel IN ('email', 'chat')),
  recipient        text NOT NULL,
  status           text NOT NULL CHECK (status IN ('queued', 'sending', 'sent', 'failed', 'skipped')),
  attempts         integer NOT NULL DEFAULT 0,
  max_attempts     integer NOT NULL,
  next_attempt_at  timestamptz NOT NULL,
  -- A worker's claim: other workers (replicas) leave the row alone until it expires.
  lease_owner      text,
  lease_until      timestamptz,
  attempt_started_at timestamptz,
  last_error       text,
  -- Where it went: the SMTP message id, the Slack message ts, or the local mailbox row.
  provider_ref     text,
  sent_at          timestamptz,
  created_at       timestamptz NOT NULL,
  updated_at       timestamptz NOT NULL,
  UNIQUE (run_id, channel, recipient)
);
CREATE INDEX IF NOT EXISTS deliveries_due ON deliveries (next_attempt_at) WHERE status IN ('queued', 'sending');
CREATE INDEX IF NOT EXISTS deliveries_by_run ON deliveries (run_id);
CREATE INDEX IF NOT EXISTS deliveries_by_status ON deliveries (status, updated_at DESC);

-- Events matched by an hourly or daily event alert, waiting for the digest of their period.
CREATE TABLE IF NOT EXISTS digest_events (
  automation_id  uuid NOT NULL REFERENCES automations (id) ON DELETE CASCADE,
  message_id     text NOT NULL,
  period_start   timestamptz NOT NULL,
  event          jsonb NOT NULL,
  received_at    timestamptz NOT NULL,
  PRIMARY KEY (automation_id, message_id)
);
CREATE INDEX IF NOT EXISTS digest_events_by_period ON digest_events (period_start);

-- The Slack workspace connected to a Sightline workspace; the bot token is sealed (bound to the row).
CREATE TABLE IF NOT EXISTS chat_connections (
  workspace_id        text PRIMARY KEY,
  provider            text NOT NULL CHECK (provider IN ('slack')),
  team_id             text NOT NULL,
  team_name           text NOT NULL,
  bot_token           bytea NOT NULL,
  -- Set by a 429: no chat delivery of this workspace is attempted before it.
  rate_limited_until  timestamptz,
  created_at          timestamptz NOT NULL,
  updated_at          timestamptz NOT NULL
);

-- Email kept in the instance when no SMTP server is configured (read with `sightline automations mailbox`).
CREATE TABLE IF NOT EXISTS mailbox (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  delivery_id  uuid NOT NULL UNIQUE,
  recipient    text NOT NULL,
  subject      text NOT NULL,
  text_body    text NOT NULL,
  html_body    text NOT NULL,
  created_at   timestamptz NOT NULL
);
