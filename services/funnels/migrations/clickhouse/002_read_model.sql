-- The funnels read model (README "Read model"): every funnel's attempts, one row per entering
-- event, kept as facts arrive, so a read aggregates the attempts that entered in its window instead
-- of rebuilding every person's journey. Events and sessions are kept ordered by person (identity),
-- so keeping an attempt current reads one person's range, not a website's window.

-- Every classified event that names a person (identity id), with the attributes steps match on
-- (type, name, path, URL, click text) and those an audience filter reads (the event's own and its
-- session's), by identity. Partitioned by month, so the scan that answers while a funnel's
-- attempts are being built still skips whole months.
CREATE TABLE IF NOT EXISTS identity_events (
  website_id        UUID,
  occurred_at       DateTime64(3, 'UTC'),
  event_id          UUID,
  identity_id       String,
  event_type        LowCardinality(String),
  event_name        String,
  page              String,
  url               String,
  click_text        String,
  hostname          String,
  page_title        String,
  session_id        String,
  channel           LowCardinality(String),
  source            String,
  medium            String,
  campaign          String,
  utm_term          String,
  utm_content       String,
  referrer_domain   String,
  landing_page      String,
  country           LowCardinality(String),
  region            String,
  city              String,
  device_type       LowCardinality(String),
  browser           LowCardinality(String),
  operating_system  LowCardinality(String)
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(occurred_at)
ORDER BY (website_id, identity_id, occurred_at, event_id)
SETTINGS non_replicated_deduplication_window = 10000;

-- One row per session and identity id: the session's start, its attributes (of its first hit) and
-- geo/device of the earliest hit seen. A session seen in several
-- batches keeps the row of its earliest hit (`hit_rank` is larger for an earlier hit; reads use
-- FINAL). `session_key` orders sessions as their ids do: a lower-case UUID by its 128-bit value,
-- any other id by its first 16 bytes. Ordered by identity so a breakdown reads each person's
-- sessions together.
CREATE TABLE IF NOT EXISTS identity_sessions (
  website_id        UUID,
  identity_id       String,
  started_at        DateTime64(3, 'UTC'),
  session_id        String,
  session_key       UInt128,
  first_hit_at      DateTime64(3, 'UTC'),
  hit_rank          UInt64,
  channel           LowCardinality(String),
  source            String,
  medium            String,
  campaign          String,
  utm_term          String,
  utm_content       String,
  referrer_domain   String,
  landing_page      String,
  country           LowCardinality(String),
  region            String,
  city              String,
  device_type       LowCardinality(String),
  browser           LowCardinality(String),
  operating_system  LowCardinality(String),
  identity_key      UInt128 MATERIALIZED reinterpretAsUInt128(sipHash128(identity_id))
)
ENGINE = ReplacingMergeTree(hit_rank)
PARTITION BY toYYYYMM(started_at)
ORDER BY (website_id, identity_key, started_at, session_key)
SETTINGS non_replicated_deduplication_window = 10000;

-- Each person's sessions on a website, as a breakdown reads them: ordered by (start, session),
-- each session once (its earliest start; the attributes of its earliest hit), from all the
-- person's identities. One row per person (their merge root), rewritten (`version`, reads use
-- FINAL) whenever a batch brings sessions of the person or a merge changes who the person is; the
-- row of a root merged away stays behind, unread (no attempt names that person any more).
CREATE TABLE IF NOT EXISTS person_touches (
  website_id        UUID,
  person            String,
  starts            Array(Int64),
  session_keys      Array(UInt128),
  channel           Array(LowCardinality(String)),
  source            Array(String),
  medium            Array(String),
  campaign          Array(String),
  utm_term          Array(String),
  utm_content       Array(String),
  referrer_domain   Array(String),
  landing_page      Array(String),
  country           Array(LowCardinality(String)),
  region            Array(String),
  city              Array(String),
  device_type       Array(LowCardinality(String)),
  browser           Array(LowCardinality(String)),
  operating_system  Array(LowCardinality(String)),
  version           UInt64,
  person_key        UInt128 MATERIALIZED reinterpretAsUInt128(sipHash128(person))
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (website_id, person_key);

-- Filled from the sessions kept so far (merge roots looked up by identity id alone: ingest's ids are
-- UUIDs); `sightline funnels rebuild` recomputes a website's rows exactly.
INSERT INTO person_touches (website_id, person, starts, session_keys, channel, source, medium, campaign, utm_term, utm_content, referrer_domain,
                            landing_page, country, region, city, device_type, browser, operating_system, version)
SELECT website_id, person, arrayMap(x -> x.1, z), arrayMap(x -> x.2, z),
       arrayMap(x -> x.3.1, z), arrayMap(x -> x.3.2, z), arrayMap(x -> x.3.3, z), arrayMap(x -> x.3.4, z), arrayMap(x -> x.3.5, z), arrayMap(x -> x.3.6, z),
       arrayMap(x -> x.3.7, z), arrayMap(x -> x.3.8, z), arrayMap(x -> x.3.9, z), arrayMap(x -> x.3.10, z), arrayMap(x -> x.3.11, z), arrayMap(x -> x.3.12, z),
       arrayMap(x -> x.3.13, z), arrayMap(x -> x.3.14, z), 1
  FROM (
    SELECT website_id, person, arraySort(groupArray((st, sk, d))) AS z
      FROM (
        SELECT s.website_id AS website_id, if(r.root != '', r.root, s.identity_id) AS person, s.session_key AS sk, min(toUnixTimestamp64Milli(s.started_at)) AS st,
               argMin((s.channel, s.source, s.medium, s.campaign, s.utm_term, s.utm_content, s.referrer_domain, s.landing_page,
                       s.country, s.region, s.city, s.device_type, s.browser, s.operating_system), s.first_hit_at) AS d
          FROM identity_sessions AS s
          LEFT JOIN (SELECT identity_id, argMax(root_id, version) AS root FROM identity_roots GROUP BY identity_id) AS r ON r.identity_id = s.identity_id
         GROUP BY website_id, person, sk
      )
     GROUP BY website_id, person
  );

-- The websites of each workspace funnels has seen events of (an identity merge is workspace-wide:
-- its people's sessions are rewritten on each of them).
CREATE TABLE IF NOT EXISTS workspace_websites (
  workspace_id      UUID,
  website_id        UUID
)
ENGINE = ReplacingMergeTree
ORDER BY (workspace_id, website_id);

-- Each funnel's attempts: one row per entering event (per hit that may start an attempt under
-- any_order) of the funnel's current definition (`generation`), with the person it belongs to (its
-- identity's merge root), the step reached, the hit that reached it and the milliseconds between
-- steps. Rows are replaced by newer computations (`version`, microseconds, taken before the facts
-- were read; reads use FINAL). `pick` orders a person's attempts as the counting rules do (furthest
-- step, then the earliest to reach it, then the latest to enter; README "Counting"), so a read
-- takes max(pick) per person. Hit keys are time (43 bits, ms) | rank (4) | mask (11) | id hash (64).
CREATE TABLE IF NOT EXISTS funnel_attempts (
  funnel_id         UUID,
  generation        UInt32,
  entry_ts          DateTime64(3, 'UTC'),
  entry_tie         UInt16,
  entry_eid         UInt64,
  person            String,
  reached           UInt8,
  done_ts           DateTime64(3, 'UTC'),
  done_tie          UInt16,
  done_eid          UInt64,
  gaps              String,
  version           UInt64,
  person_key        UInt128 MATERIALIZED reinterpretAsUInt128(sipHash128(person)),
  pick              UInt256 MATERIALIZED
    bitShiftLeft(toUInt256(reached), 244)
    + bitShiftLeft(toUInt256(bitShiftLeft(toUInt128(1), 122) - 1
        - (bitShiftLeft(toUInt128(toUnixTimestamp64Milli(done_ts)), 79) + bitShiftLeft(toUInt128(done_tie), 64) + toUInt128(done_eid))), 122)
    + toUInt256(bitShiftLeft(toUInt128(toUnixTimestamp64Milli(entry_ts)), 79) + bitShiftLeft(toUInt128(entry_tie), 64) + toUInt128(entry_eid))
)
ENGINE = ReplacingMergeTree(version)
PARTITION BY toYYYYMM(entry_ts)
ORDER BY (funnel_id, generation, entry_ts, entry_tie, entry_eid);
