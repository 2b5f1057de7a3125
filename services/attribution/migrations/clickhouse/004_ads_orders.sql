-- Ad platform reports and store orders, as crm-sync's connectors import them. Both kinds of row
-- are restated by later imports: reads take the newest copy of each key themselves (LIMIT 1 BY),
-- never relying on background merges, which only reclaim space.

-- ads.report_imported: one row per website, platform, level, item and day. A later report of the
-- same key restates it. `reported_at` (the message's occurred_at) orders the copies, then
-- `inserted_at`, then `row_index` (a key repeated inside one message: the later row wins).
-- Text fields a platform leaves out are stored as '' and answered as null.
CREATE TABLE IF NOT EXISTS ad_report_rows (
  website_id            UUID,
  workspace_id          UUID,
  platform              LowCardinality(String),
  level                 LowCardinality(String),
  item_id               String,
  date                  Date,
  account_id            String,
  account_name          String,
  currency              LowCardinality(String),
  item_name             String,
  campaign_id           String,
  campaign_name         String,
  campaign_type         LowCardinality(String),
  ad_set_id             String,
  ad_set_name           String,
  ad_id                 String,
  ad_name               String,
  spend                 Float64,
  impressions           UInt64,
  clicks                UInt64,
  platform_conversions  Float64,
  platform_revenue      Float64,
  reported_at           DateTime64(3, 'UTC'),
  row_index             UInt32,
  inserted_at           DateTime64(6, 'UTC') DEFAULT now64(6)
)
ENGINE = ReplacingMergeTree(reported_at)
PARTITION BY toYYYYMM(date)
ORDER BY (website_id, platform, level, date, item_id)
SETTINGS non_replicated_deduplication_window = 10000;

-- store.orders_imported: one row per copy of an order. A later copy restates the whole order
-- (lines and the full list of refunds), ordered by `imported_at` (the message's occurred_at), then
-- `inserted_at`. Lines and refunds are parallel arrays. A refund without a product is '' in
-- refund_product_ids. The customer's email is not stored: no read needs it.
CREATE TABLE IF NOT EXISTS store_orders (
  website_id            UUID,
  workspace_id          UUID,
  platform              LowCardinality(String),
  order_id              String,
  ordered_at            DateTime64(3, 'UTC'),
  currency              LowCardinality(String),
  line_product_ids      Array(String),
  line_names            Array(String),
  line_quantities       Array(UInt32),
  line_unit_prices      Array(Float64),
  line_unit_costs       Array(Nullable(Float64)),
  refund_ids            Array(String),
  refund_amounts        Array(Float64),
  refund_product_ids    Array(String),
  refund_quantities     Array(Nullable(UInt32)),
  refunded_ats          Array(DateTime64(3, 'UTC')),
  imported_at           DateTime64(3, 'UTC'),
  inserted_at           DateTime64(6, 'UTC') DEFAULT now64(6)
)
ENGINE = ReplacingMergeTree(imported_at)
ORDER BY (website_id, platform, order_id)
SETTINGS non_replicated_deduplication_window = 10000;
