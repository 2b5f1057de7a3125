-- Outcome values written back through the API (PATCH /contacts/{id}), latest per conversion: the
-- sales value revenue metrics will use in place of the tracked revenue once a client has set one.
CREATE TABLE IF NOT EXISTS conversion_outcomes (
  conversion_id  UUID,
  website_id     UUID,
  sales_value    Nullable(Float64),
  quote_value    Nullable(Float64),
  currency       LowCardinality(String),
  changed_at     DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(changed_at)
ORDER BY (website_id, conversion_id)
SETTINGS non_replicated_deduplication_window = 10000;
