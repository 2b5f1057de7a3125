-- The people on each CRM company and deal, as crm-sync last listed them (crm.members_synced).
-- Every sync is stored as one row holding the whole member list; a newer list replaces an older
-- one and an empty list removes everyone. Reads take argMax(..., version) per subject, so the
-- answer never depends on whether ClickHouse has merged the parts yet.
--
-- `version` orders rows by synced_at (milliseconds, shifted left 16 bits) and breaks ties between
-- different lists synced at the same instant by a hash of the content, so merges and reads pick
-- the same row whatever order the messages arrived in.
CREATE TABLE IF NOT EXISTS crm_members (
  website_id    UUID,
  workspace_id  UUID,
  subject       LowCardinality(String),
  subject_id    String,
  name          Nullable(String),
  members       Array(Tuple(email String, conversion_id String, identity_id String)),
  synced_at     DateTime64(3, 'UTC'),
  version       UInt64 MATERIALIZED bitShiftLeft(toUInt64(toUnixTimestamp64Milli(synced_at)), 16) + (sipHash64(members, name) % 65536)
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (website_id, subject, subject_id)
SETTINGS non_replicated_deduplication_window = 10000;
