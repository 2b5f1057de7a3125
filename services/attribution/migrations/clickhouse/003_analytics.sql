-- What the analytics reads (/metrics, /paths, /attribution/coverage) scan. Plain columns only:
-- reading aggregate states back is several times slower than reading values.

-- Event attributes the breakdowns need beyond those 001 stored.
ALTER TABLE touch_events
  ADD COLUMN IF NOT EXISTS hostname String,
  ADD COLUMN IF NOT EXISTS page_title String,
  ADD COLUMN IF NOT EXISTS browser LowCardinality(String),
  ADD COLUMN IF NOT EXISTS operating_system LowCardinality(String),
  ADD COLUMN IF NOT EXISTS region String,
  ADD COLUMN IF NOT EXISTS city String,
  ADD COLUMN IF NOT EXISTS is_paid UInt8,
  ADD COLUMN IF NOT EXISTS ad_platform LowCardinality(String);

-- One row per session (a touch) and identity id, written with the batch that carried its hits.
-- Every hit of a session carries the same session attributes (fixed when the session started),
-- so rows of one session written by different batches are equal apart from the identity id;
-- reads take one row per session_id. Geo and device are those of the session's first hit seen.
CREATE TABLE IF NOT EXISTS touches (
  website_id        UUID,
  workspace_id      UUID,
  session_id        String,
  identity_id       String,
  started_at        DateTime64(3, 'UTC'),
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
  click_ids         Map(String, String)
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(started_at)
ORDER BY (website_id, started_at, session_id, identity_id)
SETTINGS non_replicated_deduplication_window = 10000;

-- Each identity id's person: the id its merge group is known by (the member never merged into
-- another). Rewritten for the whole group whenever a merge touches it; `version` is the group's
-- size, which only grows, so the newest view of a group wins. Ids never merged have no row.
CREATE TABLE IF NOT EXISTS identity_roots (
  workspace_id      UUID,
  identity_id       String,
  root_id           String,
  version           UInt32
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (workspace_id, identity_id)
SETTINGS non_replicated_deduplication_window = 10000;

-- CRM and lifecycle milestones (milestone.reached, and lifecycle stages set on contacts), one row
-- per milestone id. The person is resolved when the milestone is stored.
CREATE TABLE IF NOT EXISTS milestones (
  milestone_id      String,
  website_id        UUID,
  workspace_id      UUID,
  stage             LowCardinality(String),
  occurred_at       DateTime64(3, 'UTC'),
  identity_id       String,
  conversion_id     String,
  email             String,
  deal_id           String,
  company_id        String,
  amount            Nullable(Float64),
  currency          LowCardinality(String)
)
ENGINE = ReplacingMergeTree
ORDER BY (website_id, milestone_id)
SETTINGS non_replicated_deduplication_window = 10000;

-- Where a conversion came from, for coverage and group_by=resolution: `origin` is tracker, api or
-- import; `relationship_started_at` is when the customer relationship began when a system of
-- record says so (an imported CRM contact's creation date).
ALTER TABLE conversions
  ADD COLUMN IF NOT EXISTS origin LowCardinality(String) DEFAULT 'api',
  ADD COLUMN IF NOT EXISTS relationship_started_at Nullable(DateTime64(3, 'UTC'));
