-- Outcome write-back: the durable work queue (one row per request and destination), what the CRM is
-- known to hold per conversion (the echo guard), and the ad-platform accounts uploads go to.

-- One row per (write-back request, destination). The unique key makes a redelivered request a no-op.
-- status: pending (due at next_attempt_at), failed (last attempt failed, retry scheduled), done,
-- dead (attempts exhausted or a permanent error: the dead-letter state), skipped (not written, detail says why).
CREATE TABLE IF NOT EXISTS writebacks (
  id               uuid PRIMARY KEY,
  request_id       uuid NOT NULL,
  target           text NOT NULL CHECK (target IN ('crm', 'google_ads', 'meta_ads')),
  workspace_id     text NOT NULL,
  website_id       text NOT NULL,
  conversion_id    uuid NOT NULL,
  -- The CRM provider (crm target) or the ad platform.
  provider         text,
  requested_by     text NOT NULL,
  requested_at     timestamptz NOT NULL,
  -- crm: the write-back request as received; ad platforms: the upload body without credentials.
  payload          jsonb NOT NULL,
  status           text NOT NULL CHECK (status IN ('pending', 'done', 'failed', 'dead', 'skipped')),
  attempts         integer NOT NULL DEFAULT 0,
  max_attempts     integer NOT NULL,
  next_attempt_at  timestamptz,
  -- A worker's claim: another worker (replica) leaves the row alone until it expires.
  lease_until      timestamptz,
  last_error       text,
  detail           text,
  external_id      text,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  UNIQUE (request_id, target)
);
CREATE INDEX IF NOT EXISTS writebacks_due ON writebacks (next_attempt_at) WHERE status IN ('pending', 'failed');
CREATE INDEX IF NOT EXISTS writebacks_by_status ON writebacks (status, updated_at DESC);
CREATE INDEX IF NOT EXISTS writebacks_by_conversion ON writebacks (conversion_id, target, requested_at);

-- The value of each outcome field the CRM is known to hold for a conversion: what we wrote, or what
-- a change coming from the CRM itself said. A request whose every change is already known there is
-- an echo and is not written again.
CREATE TABLE IF NOT EXISTS crm_known_values (
  website_id     text NOT NULL,
  provider       text NOT NULL,
  conversion_id  uuid NOT NULL,
  field          text NOT NULL,
  value          jsonb,
  source         text NOT NULL,
  updated_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (website_id, provider, conversion_id, field)
);

-- Where a website's offline conversions go: one account per ad platform. credentials are sealed
-- like connections.credentials (tokens); settings are plain (account ids, conversion action, pixel).
CREATE TABLE IF NOT EXISTS ad_destinations (
  website_id    text NOT NULL,
  platform      text NOT NULL CHECK (platform IN ('google_ads', 'meta_ads')),
  workspace_id  text NOT NULL,
  credentials   bytea NOT NULL,
  settings      jsonb NOT NULL DEFAULT '{}',
  status        text NOT NULL DEFAULT 'active',
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (website_id, platform)
);
