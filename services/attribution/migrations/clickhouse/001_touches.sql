-- Attribution's facts: classified events (one row per event id), sessions aggregated from them,
-- conversions and identity merges. Every consumer insert carries its message id as the
-- deduplication token, so a redelivered message adds nothing; reads are exact even if a duplicate
-- slipped past the token window (LIMIT 1 BY on ids, and session aggregates that are idempotent:
-- min, max, argMin and uniqExact of event ids).

-- Every classified event of a website. Keyed by identity so one person's history is a range read.
CREATE TABLE IF NOT EXISTS touch_events (
  event_id          UUID,
  workspace_id      UUID,
  website_id        UUID,
  identity_id       String,
  anonymous_id      String,
  session_id        String,
  occurred_at       DateTime64(3, 'UTC'),
  event_type        LowCardinality(String),
  event_name        String,
  page              String,
  revenue           Nullable(Float64),
  currency          LowCardinality(String),
  session_started_at Nullable(DateTime64(3, 'UTC')),
  landing_page      String,
  channel           LowCardinality(String),
  source            String,
  medium            String,
  campaign          String,
  term              String,
  content           String,
  referrer_domain   String,
  click_ids         Map(String, String),
  device_type       LowCardinality(String),
  country           LowCardinality(String)
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(occurred_at)
ORDER BY (website_id, identity_id, occurred_at, event_id)
SETTINGS non_replicated_deduplication_window = 10000;

-- One row per (website, identity, session) after merges; a session whose hits carry two identity
-- ids (before and after an identity merge) has two rows, which reads combine by session_id.
-- Session attributes are those of its first hit (argMin by time).
CREATE TABLE IF NOT EXISTS sessions (
  website_id        UUID,
  identity_id       String,
  session_id        String,
  workspace_id      SimpleAggregateFunction(any, UUID),
  anonymous_id      SimpleAggregateFunction(any, String),
  started_at        SimpleAggregateFunction(min, DateTime64(3, 'UTC')),
  ended_at          SimpleAggregateFunction(max, DateTime64(3, 'UTC')),
  landing_page      AggregateFunction(argMin, String, DateTime64(3, 'UTC')),
  channel           AggregateFunction(argMin, String, DateTime64(3, 'UTC')),
  source            AggregateFunction(argMin, String, DateTime64(3, 'UTC')),
  medium            AggregateFunction(argMin, String, DateTime64(3, 'UTC')),
  campaign          AggregateFunction(argMin, String, DateTime64(3, 'UTC')),
  term              AggregateFunction(argMin, String, DateTime64(3, 'UTC')),
  content           AggregateFunction(argMin, String, DateTime64(3, 'UTC')),
  referrer_domain   AggregateFunction(argMin, String, DateTime64(3, 'UTC')),
  click_ids         AggregateFunction(argMin, Map(String, String), DateTime64(3, 'UTC')),
  device_type       AggregateFunction(argMin, String, DateTime64(3, 'UTC')),
  country           AggregateFunction(argMin, String, DateTime64(3, 'UTC')),
  events            AggregateFunction(uniqExact, UUID),
  pageviews         AggregateFunction(uniqExactIf, UUID, UInt8)
)
ENGINE = AggregatingMergeTree
ORDER BY (website_id, identity_id, session_id);

-- Server-side events have no session; they stay in touch_events only.
CREATE MATERIALIZED VIEW IF NOT EXISTS sessions_mv TO sessions AS
SELECT
  website_id,
  identity_id,
  session_id,
  any(workspace_id) AS workspace_id,
  any(anonymous_id) AS anonymous_id,
  min(ifNull(session_started_at, occurred_at)) AS started_at,
  max(occurred_at) AS ended_at,
  argMinState(landing_page, occurred_at) AS landing_page,
  argMinState(CAST(channel AS String), occurred_at) AS channel,
  argMinState(source, occurred_at) AS source,
  argMinState(medium, occurred_at) AS medium,
  argMinState(campaign, occurred_at) AS campaign,
  argMinState(term, occurred_at) AS term,
  argMinState(content, occurred_at) AS content,
  argMinState(referrer_domain, occurred_at) AS referrer_domain,
  argMinState(click_ids, occurred_at) AS click_ids,
  argMinState(CAST(device_type AS String), occurred_at) AS device_type,
  argMinState(CAST(country AS String), occurred_at) AS country,
  uniqExactState(event_id) AS events,
  uniqExactIfState(event_id, toUInt8(event_type = 'pageview')) AS pageviews
FROM touch_events
WHERE session_id != ''
GROUP BY website_id, identity_id, session_id;

-- One row per conversion (conversion_id = the conversion event's id). The first/last touch
-- columns hold touches known without browsing history (imported contacts, CRM-provided
-- attribution); journeys of conversions without sessions are rebuilt from them.
CREATE TABLE IF NOT EXISTS conversions (
  conversion_id     UUID,
  workspace_id      UUID,
  website_id        UUID,
  identity_id       String,
  anonymous_id      String,
  email             String,
  occurred_at       DateTime64(3, 'UTC'),
  event_type        LowCardinality(String),
  event_name        String,
  revenue           Nullable(Float64),
  currency          LowCardinality(String),
  first_touch_at        Nullable(DateTime64(3, 'UTC')),
  first_touch_channel   Nullable(String),
  first_touch_source    Nullable(String),
  first_touch_medium    Nullable(String),
  first_touch_campaign  Nullable(String),
  last_touch_at         Nullable(DateTime64(3, 'UTC')),
  last_touch_channel    Nullable(String),
  last_touch_source     Nullable(String),
  last_touch_medium     Nullable(String),
  last_touch_campaign   Nullable(String)
)
ENGINE = ReplacingMergeTree
ORDER BY (website_id, conversion_id)
SETTINGS non_replicated_deduplication_window = 10000;

-- Identity merges (loser → winner) of a workspace. History keyed by any member of a merged
-- group is read through the whole group, so nothing stored is ever rewritten.
CREATE TABLE IF NOT EXISTS identity_merges (
  workspace_id      UUID,
  from_identity_id  String,
  into_identity_id  String,
  merged_at         DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree
ORDER BY (workspace_id, from_identity_id, into_identity_id)
SETTINGS non_replicated_deduplication_window = 10000;
