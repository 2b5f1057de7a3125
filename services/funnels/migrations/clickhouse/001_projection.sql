-- The funnels projection: what funnel reads need of every person's history, kept as facts arrive.
-- Each consumer insert carries a deduplication token derived from its message ids, so a
-- redelivered message adds nothing; reads are exact even if a duplicate slipped past the token
-- window (revenue facts are taken once per id). The person is resolved at read time through
-- identity_roots, so an identity merge rewrites no history. Events and sessions, kept by person,
-- are in 002_read_model.sql with the read model built from them.

-- Subscription lifecycle facts (milestone.reached whose stage is a revenue event). The person is
-- the identity the message names, else the identity that sent the email (resolved at read time
-- through `emails`, so a fact that arrives before the person's first identified event still joins).
CREATE TABLE IF NOT EXISTS revenue_events (
  website_id        UUID,
  occurred_at       DateTime64(3, 'UTC'),
  milestone_id      String,
  stage             LowCardinality(String),
  identity_id       String,
  email_hash        String,
  amount            Nullable(Float64),
  currency          LowCardinality(String)
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(occurred_at)
ORDER BY (website_id, occurred_at, milestone_id)
SETTINGS non_replicated_deduplication_window = 10000;

-- Which identity ids were seen with which email (SHA-256 of the normalised address), for revenue
-- facts that name a person by email only.
CREATE TABLE IF NOT EXISTS emails (
  workspace_id      UUID,
  email_hash        String,
  identity_id       String
)
ENGINE = ReplacingMergeTree
ORDER BY (workspace_id, email_hash, identity_id)
SETTINGS non_replicated_deduplication_window = 10000;

-- Identity ids known by an email or phone: their people are the `user` scope.
CREATE TABLE IF NOT EXISTS identified (
  workspace_id      UUID,
  identity_id       String
)
ENGINE = ReplacingMergeTree
ORDER BY (workspace_id, identity_id)
SETTINGS non_replicated_deduplication_window = 10000;

-- Identity merges (loser → winner) as ingest announced them.
CREATE TABLE IF NOT EXISTS identity_merges (
  workspace_id      UUID,
  from_identity_id  String,
  into_identity_id  String
)
ENGINE = ReplacingMergeTree
ORDER BY (workspace_id, from_identity_id, into_identity_id)
SETTINGS non_replicated_deduplication_window = 10000;

-- Each merged identity id's person: the id its merge group is known by. Rewritten for the whole
-- group whenever a merge touches it; `version` is the group's size, which only grows, so the
-- newest view of a group wins. Ids never merged have no row (they are their own person).
CREATE TABLE IF NOT EXISTS identity_roots (
  workspace_id      UUID,
  identity_id       String,
  root_id           String,
  version           UInt32
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (workspace_id, identity_id)
SETTINGS non_replicated_deduplication_window = 10000;
