-- The read model: what the analytics reads aggregate instead of rebuilding journeys from history
-- on every request, maintained by the consumers as facts arrive (src/read-model/). Two derived
-- tables hold answers (outcome_journeys, traffic_sessions); traffic_events orders the events by
-- time; two are indexes the maintenance looks facts up by (touches_by_identity, outcome_keys).
-- The last three are filled by materialized views. Derived rows are
-- versioned by `computed_at` (when the computation started reading its facts) and read with FINAL,
-- so a newer computation replaces an older one whatever order they land in, and a duplicate that
-- slipped past an insert's deduplication token never counts twice.

-- Every session row of `touches`, keyed by identity: a person's history is a range read, which is
-- what recomputing the journeys of a few people needs.
CREATE TABLE IF NOT EXISTS touches_by_identity (
  workspace_id      UUID,
  website_id        UUID,
  identity_id       String,
  started_at        DateTime64(3, 'UTC'),
  session_id        String,
  channel           LowCardinality(String),
  source            String,
  medium            String,
  campaign          String,
  term              String,
  content           String,
  referrer_domain   String,
  landing_page      String,
  device_type       LowCardinality(String),
  browser           LowCardinality(String),
  operating_system  LowCardinality(String),
  country           LowCardinality(String),
  region            String,
  city              String,
  is_paid           UInt8,
  ad_platform       LowCardinality(String)
)
ENGINE = ReplacingMergeTree
ORDER BY (workspace_id, identity_id, website_id, started_at, session_id)
SETTINGS non_replicated_deduplication_window = 10000;

CREATE MATERIALIZED VIEW IF NOT EXISTS touches_by_identity_mv TO touches_by_identity AS
SELECT workspace_id, website_id, identity_id, started_at, session_id, channel, source, medium, campaign, term, content,
       referrer_domain, landing_page, device_type, browser, operating_system, country, region, city, is_paid, ad_platform
  FROM touches;

-- Outcomes (conversions and milestones) by the keys that tie them to other facts: `i:<identity>`
-- (a person's sessions and merges reach its outcomes) and, for conversions, `e:<email>` (coverage
-- dates a relationship from every conversion of the same email). `began` is when the conversion
-- shows the relationship had begun: its stated start, else its own time.
CREATE TABLE IF NOT EXISTS outcome_keys (
  workspace_id      UUID,
  key               String,
  website_id        UUID,
  kind              LowCardinality(String),
  outcome_id        String,
  occurred_at       DateTime64(3, 'UTC'),
  began             DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree
ORDER BY (workspace_id, key, website_id, kind, outcome_id)
SETTINGS non_replicated_deduplication_window = 10000;

CREATE MATERIALIZED VIEW IF NOT EXISTS outcome_keys_conversions_mv TO outcome_keys AS
SELECT workspace_id, key, website_id, 'conversion' AS kind, toString(conversion_id) AS outcome_id, occurred_at,
       least(occurred_at, ifNull(relationship_started_at, occurred_at)) AS began
  FROM conversions
 ARRAY JOIN arrayFilter(k -> k != '', [if(identity_id = '', '', concat('i:', identity_id)),
                                       if(trimBoth(email) = '', '', concat('e:', lower(trimBoth(email))))]) AS key;

CREATE MATERIALIZED VIEW IF NOT EXISTS outcome_keys_milestones_mv TO outcome_keys AS
SELECT workspace_id, concat('i:', identity_id) AS key, website_id, 'milestone' AS kind, milestone_id AS outcome_id, occurred_at, occurred_at AS began
  FROM milestones
 WHERE identity_id != '';

-- Each outcome with its journey and everything the credited reads (/metrics, /paths,
-- /attribution/coverage) filter or group on. The journey is the person's touches (one per
-- session, every merged identity) that started in the 90 days up to the outcome, oldest first,
-- held as parallel arrays `j_<field>` so a read loads only the fields it uses. `person` is the
-- outcome's person when it was computed (merges recompute the group's outcomes);
-- `relationship_began` the earliest start any conversion of the same person or email states.
CREATE TABLE IF NOT EXISTS outcome_journeys (
  website_id               UUID,
  workspace_id             UUID,
  kind                     LowCardinality(String),
  occurred_at              DateTime64(3, 'UTC'),
  outcome_id               String,
  identity_id              String,
  person                   String,
  value                    Float64,
  event_type               LowCardinality(String),
  event_name               String,
  stage                    LowCardinality(String),
  email                    String,
  origin                   LowCardinality(String),
  relationship_started_at  Nullable(DateTime64(3, 'UTC')),
  relationship_began       DateTime64(3, 'UTC'),
  has_visitor              UInt8,
  touches                  UInt32,
  j_started_at             Array(DateTime64(3, 'UTC')),
  j_session_id             Array(String),
  j_channel                Array(LowCardinality(String)),
  j_source                 Array(String),
  j_medium                 Array(String),
  j_campaign               Array(String),
  j_term                   Array(String),
  j_content                Array(String),
  j_referrer_domain        Array(String),
  j_landing_page           Array(String),
  j_device_type            Array(LowCardinality(String)),
  j_browser                Array(LowCardinality(String)),
  j_operating_system       Array(LowCardinality(String)),
  j_country                Array(LowCardinality(String)),
  j_region                 Array(String),
  j_city                   Array(String),
  j_is_paid                Array(UInt8),
  j_ad_platform            Array(LowCardinality(String)),
  computed_at              DateTime64(6, 'UTC')
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYYYYMM(occurred_at)
ORDER BY (website_id, kind, occurred_at, outcome_id)
SETTINGS non_replicated_deduplication_window = 10000;

-- One row per session with its person resolved (the visitor), for visitors and sessions by any
-- session attribute: ordered by start, so a window reads only its own rows. `person_key` is the
-- 128-bit hash ClickHouse's uniqExact would take of the person string itself (0 for a session
-- without a visitor), stored so counting distinct visitors neither reads nor rehashes the strings.
CREATE TABLE IF NOT EXISTS traffic_sessions (
  website_id        UUID,
  workspace_id      UUID,
  started_at        DateTime64(3, 'UTC'),
  session_id        String,
  identity_id       String,
  person            String,
  person_key        UInt128 MATERIALIZED if(person = '', toUInt128(0), reinterpretAsUInt128(sipHash128(person))),
  channel           LowCardinality(String),
  source            String,
  medium            String,
  campaign          String,
  term              String,
  content           String,
  referrer_domain   String,
  landing_page      String,
  device_type       LowCardinality(String),
  browser           LowCardinality(String),
  operating_system  LowCardinality(String),
  country           LowCardinality(String),
  region            String,
  city              String,
  is_paid           UInt8,
  ad_platform       LowCardinality(String),
  computed_at       DateTime64(6, 'UTC')
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYYYYMM(started_at)
ORDER BY (website_id, started_at, session_id)
SETTINGS non_replicated_deduplication_window = 10000;

-- Every classified event again, ordered by time: page views and events of a window (and visitors
-- or sessions by an event attribute) read only the window's rows. One row per event id; FINAL
-- counts each once.
CREATE TABLE IF NOT EXISTS traffic_events (
  website_id         UUID,
  occurred_at        DateTime64(3, 'UTC'),
  event_id           UUID,
  identity_id        String,
  session_id         String,
  session_started_at Nullable(DateTime64(3, 'UTC')),
  event_type         LowCardinality(String),
  event_name         String,
  page               String,
  hostname           String,
  page_title         String,
  channel            LowCardinality(String),
  source             String,
  medium             String,
  campaign           String,
  term               String,
  content            String,
  referrer_domain    String,
  landing_page       String,
  device_type        LowCardinality(String),
  browser            LowCardinality(String),
  operating_system   LowCardinality(String),
  country            LowCardinality(String),
  region             String,
  city               String,
  is_paid            UInt8,
  ad_platform        LowCardinality(String)
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(occurred_at)
ORDER BY (website_id, occurred_at, event_id)
SETTINGS non_replicated_deduplication_window = 10000;

CREATE MATERIALIZED VIEW IF NOT EXISTS traffic_events_mv TO traffic_events AS
SELECT website_id, occurred_at, event_id, identity_id, session_id, session_started_at, event_type, event_name, page, hostname, page_title,
       channel, source, medium, campaign, term, content, referrer_domain, landing_page, device_type, browser, operating_system, country,
       region, city, is_paid, ad_platform
  FROM touch_events;

-- What conversion.attributed last told the contacts service, per conversion (`state`: its first
-- and last touch as published): compared with every new computation, so only a changed first or
-- last touch is published, and a publish that failed is retried by the next computation. A
-- journey only gains touches, so the row with the most touches is the latest.
CREATE TABLE IF NOT EXISTS attributed_published (
  website_id        UUID,
  conversion_id     String,
  touch_count       UInt32,
  state             String,
  published_at      DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = ReplacingMergeTree(touch_count)
ORDER BY (website_id, conversion_id)
SETTINGS non_replicated_deduplication_window = 10000;

-- Existing history, indexed once (a fresh database has none). The derived tables are filled by
-- `sightline attribution rebuild`.
INSERT INTO touches_by_identity
SELECT workspace_id, website_id, identity_id, started_at, session_id, channel, source, medium, campaign, term, content,
       referrer_domain, landing_page, device_type, browser, operating_system, country, region, city, is_paid, ad_platform
  FROM touches;

INSERT INTO traffic_events
SELECT website_id, occurred_at, event_id, identity_id, session_id, session_started_at, event_type, event_name, page, hostname, page_title,
       channel, source, medium, campaign, term, content, referrer_domain, landing_page, device_type, browser, operating_system, country,
       region, city, is_paid, ad_platform
  FROM touch_events;

INSERT INTO outcome_keys
SELECT workspace_id, key, website_id, 'conversion', toString(conversion_id), occurred_at,
       least(occurred_at, ifNull(relationship_started_at, occurred_at))
  FROM conversions
 ARRAY JOIN arrayFilter(k -> k != '', [if(identity_id = '', '', concat('i:', identity_id)),
                                       if(trimBoth(email) = '', '', concat('e:', lower(trimBoth(email))))]) AS key;

INSERT INTO outcome_keys
SELECT workspace_id, concat('i:', identity_id), website_id, 'milestone', milestone_id, occurred_at, occurred_at
  FROM milestones
 WHERE identity_id != '';
