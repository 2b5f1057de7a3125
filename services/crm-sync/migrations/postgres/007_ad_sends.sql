-- Which outcomes each queued ad upload carries (writeback/plan.ts "send" rules): one row per
-- (write-back, outcome key), where the key is "conversion" or "stage:<stage>". The planner reads
-- them back so an outcome goes to a platform once per conversion (a dead upload frees its outcomes
-- for a later request), and so a changed value after the send is recognised and refused with a reason.
CREATE TABLE IF NOT EXISTS ad_sends (
  writeback_id  uuid NOT NULL REFERENCES writebacks (id) ON DELETE CASCADE,
  conversion_id uuid NOT NULL,
  platform      text NOT NULL,
  send_key      text NOT NULL,
  -- The value sent (null: none); currency ISO 4217.
  value         double precision,
  currency      text,
  created_at    timestamptz NOT NULL,
  PRIMARY KEY (writeback_id, send_key)
);
CREATE INDEX IF NOT EXISTS ad_sends_conversion ON ad_sends (conversion_id, platform);

-- Uploads queued before stage rules each carried the tracked conversion (value not recorded).
INSERT INTO ad_sends (writeback_id, conversion_id, platform, send_key, value, currency, created_at)
SELECT id, conversion_id, target, 'conversion', NULL, NULL, created_at FROM writebacks
WHERE target <> 'crm' AND status IN ('pending', 'failed', 'done')
ON CONFLICT DO NOTHING;
