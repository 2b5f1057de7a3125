-- Raw events, one row per event_id. Inserts carry the intake batch id as their deduplication
-- token, so a redelivered batch adds nothing; ReplacingMergeTree plus `LIMIT 1 BY event_id` on
-- reads keeps answers exact even if a duplicate slipped past the token window.
CREATE TABLE IF NOT EXISTS events (
  event_id          UUID,
  workspace_id      UUID,
  website_id        UUID,
  origin            LowCardinality(String),
  event_type        LowCardinality(String),
  event_name        String,
  occurred_at       DateTime64(3, 'UTC'),
  received_at       DateTime64(3, 'UTC'),
  anonymous_id      String,
  identity_id       String,
  email_hash        String,
  session_id        String,
  revenue           Nullable(Float64),
  currency          LowCardinality(String),
  properties        String,
  url               String,
  hostname          LowCardinality(String),
  page              String,
  title             String,
  referrer          String,
  referrer_domain   LowCardinality(String),
  screen            LowCardinality(String),
  source            LowCardinality(String),
  medium            LowCardinality(String),
  campaign          String,
  term              String,
  content           String,
  channel           LowCardinality(String),
  channel_rule      LowCardinality(String),
  click_ids         Map(String, String),
  browser           LowCardinality(String),
  operating_system  LowCardinality(String),
  device_type       LowCardinality(String),
  country           LowCardinality(String),
  region            LowCardinality(String),
  city              LowCardinality(String),
  session_started_at  Nullable(DateTime64(3, 'UTC')),
  session_landing_page String,
  session_channel     LowCardinality(String),
  session_source      LowCardinality(String),
  session_medium      LowCardinality(String),
  session_campaign    String,
  session_referrer_domain LowCardinality(String)
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(occurred_at)
ORDER BY (website_id, occurred_at, event_id)
SETTINGS non_replicated_deduplication_window = 10000;
